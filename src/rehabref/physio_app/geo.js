// Check-in and check-out: ask the browser for the phone's position, then post the form with
// it (or with the reason the browser gave none). Nothing is made up when location is denied.
(function () {
  var REASONS = {1: "permission_denied", 2: "position_unavailable", 3: "timeout"};
  document.querySelectorAll("form[data-locate]").forEach(function (form) {
    var status = form.querySelector("[data-locate-status]");
    var sent = false;
    form.addEventListener("submit", function (event) {
      if (sent) { return; }
      event.preventDefault();
      if (!form.reportValidity()) { return; }
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      status.textContent = "Finding your position…";
      function post() { sent = true; form.submit(); }
      if (!navigator.geolocation) {
        form.elements.refusal.value = "unsupported";
        return post();
      }
      navigator.geolocation.getCurrentPosition(function (position) {
        form.elements.lat.value = position.coords.latitude;
        form.elements.lng.value = position.coords.longitude;
        form.elements.accuracy.value = position.coords.accuracy;
        status.textContent = "Position found (within " + Math.round(position.coords.accuracy) + " m).";
        post();
      }, function (error) {
        form.elements.refusal.value = REASONS[error.code] || "position_unavailable";
        status.textContent = "No position: the visit is recorded as unverified.";
        post();
      }, {enableHighAccuracy: true, timeout: 20000, maximumAge: 0});
    });
  });
})();
