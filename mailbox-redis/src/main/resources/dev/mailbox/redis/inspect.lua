-- Read only (the web console's counts): changes nothing, not even what promote() would move. ARGV[3] the most
-- entries of each kind read one by one. Returns {queued, in flight, delayed, oldest enqueued ms or -1, exact (1 or
-- 0), now}. Every message has a meta, so HLEN meta is the total (as count.lua). Only the later entries of timed
-- (due after now) are not queued: in flight when their meta names a delivery (a token), else delayed (a delay or
-- a nack's timeout; FIFO: a message waiting out a nack timeout, which gq holds too). Everything else is queued,
-- as the next receive would find it: the ready list, what is due in timed (a lapsed delivery, an ended delay or
-- nack timeout), a noisy tenant's messages set aside in tparked, and a FIFO group's messages in gq, also those
-- waiting behind one of their group in flight. Past the limit, later entries not read count as delayed and the
-- answer is not exact. The oldest is the oldest of the entries read.
local limit = tonumber(ARGV[3])
local total = redis.call('HLEN', K.meta)
local later_total = redis.call('ZCOUNT', K.timed, '(' .. NOW, '+inf')
local in_flight = 0
local delayed = 0
local oldest = -1
-- Notes the message's enqueue time; returns its delivery token, or nil if it has no meta.
local function token_of(id)
  local m = redis.call('HGET', K.meta, id)
  if not m then return nil end
  local enqueued, _, _, _, token = parse_meta(m)
  enqueued = tonumber(enqueued)
  if oldest < 0 or enqueued < oldest then oldest = enqueued end
  return token
end
-- a tenant's delivery is '<id> <tenant>' in timed; gq and tparked hold '<group or tenant> <id>'
local later = redis.call('ZRANGEBYSCORE', K.timed, '(' .. NOW, '+inf', 'LIMIT', 0, limit)
for _, member in ipairs(later) do
  local token = token_of(string.match(member, '^[^ ]+'))
  if token == nil then
    later_total = later_total - 1 -- not a message: HLEN did not count it either
  elseif token ~= '' then
    in_flight = in_flight + 1
  else
    delayed = delayed + 1
  end
end
delayed = delayed + later_total - #later
-- '(0' leaves out the member 'fair' (score 0)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', K.timed, '(0', NOW, 'LIMIT', 0, limit)) do
  token_of(string.match(member, '^[^ ]+'))
end
--#if FIFO
for _, member in ipairs(redis.call('ZRANGEBYLEX', K.gq, '-', '+', 'LIMIT', 0, limit)) do
  token_of(string.match(member, ' (.*)$'))
end
--#else
for _, id in ipairs(redis.call('LRANGE', K.ready, 0, limit - 1)) do token_of(id) end
for _, member in ipairs(redis.call('ZRANGEBYLEX', K.tparked, '-', '+', 'LIMIT', 0, limit)) do
  token_of(string.match(member, ' (.*)$'))
end
--#end
local exact = 1
if #later < later_total then exact = 0 end
return {math.max(0, total - in_flight - delayed), in_flight, delayed, oldest, exact, NOW}
