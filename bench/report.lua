-- Appended to every script: print one JSON line with the numbers the runner reads.
function done(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format(
    '\nBENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
    '"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_timeout":%d,"non_2xx":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
    non2xx))
end
