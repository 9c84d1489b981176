-- POST a new Shape V1 referral per request: unique external_ref and Idempotency-Key.
local counter = 0
local thread_tag = ""
local threads_made = 0

function setup(thread)
  threads_made = threads_made + 1
  thread:set("tag", tostring(threads_made))
end

function init(args)
  thread_tag = tag .. "-" .. tostring(os.time())
  key = args[1]
end

function request()
  counter = counter + 1
  local ref = "BENCH-" .. thread_tag .. "-" .. counter
  local body = '{"external_ref":"' .. ref .. '","patient":{"first_name":"Amaka",' ..
    '"phone":"+2348031234567","city":"Lagos"},"reason":"Lower back pain",' ..
    '"care_mode":"either","preferred_contact":"messaging","route":"assistant",' ..
    '"consent":{"accepted":true,"accepted_at":"2026-11-20T09:30:00Z",' ..
    '"version":"2026-01","source":"bench"},"metadata":{"campaign":"bench"}}'
  local headers = {}
  headers["Authorization"] = "Bearer " .. key
  headers["Content-Type"] = "application/json"
  headers["Idempotency-Key"] = ref
  return wrk.format("POST", "/api/v1/partners/referrals", headers, body)
end
