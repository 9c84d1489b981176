-- GET the yardstick endpoint.
function request()
  return wrk.format("GET", "/ping")
end
