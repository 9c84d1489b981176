-- POST a small JSON item to the one-insert reference app.
function request()
  local body = '{"name":"Amaka","city":"Lagos","note":"Lower back pain"}'
  return wrk.format("POST", "/items", {["Content-Type"] = "application/json"}, body)
end
