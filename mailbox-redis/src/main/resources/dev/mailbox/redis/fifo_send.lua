-- A FIFO mailbox's send: ARGV[3] capacity (0 none), ARGV[4] attributes ('' none), ARGV[5]
-- deduplication window ms (0: no deduplication), ARGV[6] the group id, ARGV[7..] the bodies, stored
-- in this order at the end of their group. With a window, KEYS[N + 1..] hold one deduplication key per
-- body, as in send.lua; two bodies of one call under one key (content-based deduplication of equal
-- bodies) are stored once. A send needs no promote(): a group's order is its ids', whatever becomes
-- due when. Returns the ids, or -n if the mailbox has no room for the n new messages (nothing stored).
local capacity = tonumber(ARGV[3])
local attrs = ARGV[4]
local window = tonumber(ARGV[5])
local group = ARGV[6]
local n = #ARGV - 6
local ids = {}
local fresh = n
local same -- body i -> the earlier body of this call with the same deduplication key
if window > 0 then
  local here = {}
  for i = 1, n do
    local key = KEYS[N + i]
    local seen = redis.call('GET', key)
    if seen then
      ids[i] = seen
      fresh = fresh - 1
    elseif here[key] then
      same = same or {}
      same[i] = here[key]
      fresh = fresh - 1
    else
      here[key] = i
    end
  end
end
if fresh == 0 then
  touch(K, TTL)
  return ids
end
if capacity > 0 and redis.call('HLEN', K.meta) + fresh > capacity then
  return -fresh
end
local first = new_id(K, fresh)
local meta = format_meta(NOW, 0, attrs ~= '' and 'G' or 'g', '', '') .. '||' .. group
local j = 0
for i = 1, n do
  if not ids[i] and not (same and same[i]) then
    j = j + 1
    local id = format_id(first + j)
    redis.call('HSET', K.body, id, ARGV[6 + i])
    redis.call('HSET', K.meta, id, meta)
    if attrs ~= '' then redis.call('HSET', K.attr, id, attrs) end
    redis.call('ZADD', K.gq, 0, group .. ' ' .. id)
    if window > 0 then redis.call('SET', KEYS[N + i], id, 'NX', 'PX', window) end
    ids[i] = id
  end
end
if same then
  for i, earlier in pairs(same) do
    ids[i] = ids[earlier]
  end
end
-- An idle group (nothing in flight, not queued) is queued. Its head may be waiting out a nack timeout;
-- then the receive that meets it un-queues it, which is cheaper than looking on every send.
if redis.call('HSETNX', K.gstate, group, 'q') == 1 then
  redis.call('RPUSH', K.gready, group)
  redis.call('PUBLISH', CHANNEL, 'r1')
end
touch(K, TTL)
return ids
