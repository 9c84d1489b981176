-- GET the newest page of 20 referrals with one status, a random one of the statuses given.
local statuses = {}

function setup(thread)
  thread_count = (thread_count or 0) + 1
  thread:set("thread_number", thread_count)
end

function init(args)
  key = args[1]
  for status in string.gmatch(args[2], "[^,]+") do
    statuses[#statuses + 1] = status
  end
  math.randomseed(os.time() * 100 + (thread_number or 0))
end

function request()
  local status = statuses[math.random(1, #statuses)]
  local headers = {}
  headers["Authorization"] = "Bearer " .. key
  return wrk.format("GET", "/api/v1/partners/referrals?status=" .. status .. "&limit=20", headers)
end
