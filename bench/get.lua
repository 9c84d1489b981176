-- GET a random referral from the ids file by id.
local ids = {}

function init(args)
  key = args[1]
  for line in io.lines(args[2]) do
    ids[#ids + 1] = line
  end
end

function request()
  local id = ids[math.random(1, #ids)]
  local headers = {}
  headers["Authorization"] = "Bearer " .. key
  return wrk.format("GET", "/api/v1/partners/referrals/" .. id, headers)
end
