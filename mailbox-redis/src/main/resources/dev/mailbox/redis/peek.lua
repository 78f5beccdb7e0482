-- Read only (the web console's peek): changes nothing. ARGV[3] the most messages. Returns {now, then per message:
-- id, body, enqueuedAt, deliveryCount, state, attrs}, state 'q' (queued), 'd' (delayed) or 'f' (in flight), in the
-- order a receive would take them: the ready list, then what is due (promote() appends it in due order), then the
-- rest of timed, soonest first.
local max = tonumber(ARGV[3])
local out = {NOW}
local n = 0
local function add(id, state)
  local body = redis.call('HGET', K.body, id)
  local m = redis.call('HGET', K.meta, id)
  if not (body and m) then return end
  local enqueued, count, flag, d, token = parse_meta(m)
  if state == nil then
    if d ~= nil and token ~= '' then state = 'f' else state = 'd' end
  end
  out[#out + 1] = id
  out[#out + 1] = body
  out[#out + 1] = tonumber(enqueued)
  out[#out + 1] = count
  out[#out + 1] = state
  out[#out + 1] = flag == 'a' and (redis.call('HGET', K.attr, id) or '') or ''
  n = n + 1
end
for _, id in ipairs(redis.call('LRANGE', K.ready, 0, max - 1)) do add(id, 'q') end
if n < max then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.timed, '-inf', NOW, 'LIMIT', 0, max - n)) do add(id, 'q') end
end
if n < max then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.timed, '(' .. NOW, '+inf', 'LIMIT', 0, max - n)) do add(id, nil) end
end
return out
