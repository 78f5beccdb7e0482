-- Read only (the web console's counts): changes nothing, not even what promote() would move. ARGV[3] the most
-- entries of each kind read one by one. Returns {queued, in flight, delayed, oldest enqueued ms or -1, exact (1 or
-- 0), now}. Queued counts what a receive would find: the ready list and what is due in timed. A later entry of
-- timed is in flight when its meta names a current delivery (a due time and a token), else delayed; past the
-- limit the rest count as delayed and the answer is not exact.
local limit = tonumber(ARGV[3])
local ready = redis.call('LLEN', K.ready)
local timed = redis.call('ZCARD', K.timed)
local due = redis.call('ZCOUNT', K.timed, '-inf', NOW)
local in_flight = 0
local oldest = -1
local exact = 1
local function older(id)
  local m = redis.call('HGET', K.meta, id)
  if not m then return nil end
  local enqueued, _, _, d, token = parse_meta(m)
  enqueued = tonumber(enqueued)
  if oldest < 0 or enqueued < oldest then oldest = enqueued end
  return d ~= nil and token ~= ''
end
local later = redis.call('ZRANGEBYSCORE', K.timed, '(' .. NOW, '+inf', 'LIMIT', 0, limit)
if #later < timed - due then exact = 0 end
for _, id in ipairs(later) do
  if older(id) then in_flight = in_flight + 1 end
end
for _, id in ipairs(redis.call('LRANGE', K.ready, 0, limit - 1)) do older(id) end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.timed, '-inf', NOW, 'LIMIT', 0, limit)) do older(id) end
return {ready + due, in_flight, timed - due - in_flight, oldest, exact, NOW}
