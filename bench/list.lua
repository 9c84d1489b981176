-- GET the newest page of referrals with one status.
function init(args)
  key = args[1]
end

function request()
  local headers = {}
  headers["Authorization"] = "Bearer " .. key
  return wrk.format("GET", "/api/v1/partners/referrals?status=received&limit=20", headers)
end
