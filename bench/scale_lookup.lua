-- GET one referral by external_ref, a random one of the refs in the file given (one a line).
local refs = {}

function setup(thread)
  thread_count = (thread_count or 0) + 1
  thread:set("thread_number", thread_count)
end

function init(args)
  key = args[1]
  for line in io.lines(args[2]) do
    refs[#refs + 1] = line
  end
  math.randomseed(os.time() * 100 + (thread_number or 0))
end

function request()
  local ref = refs[math.random(1, #refs)]
  local headers = {}
  headers["Authorization"] = "Bearer " .. key
  return wrk.format("GET", "/api/v1/partners/referrals?external_ref=" .. ref, headers)
end
