-- ARGV[3] delay ms, ARGV[4] capacity (0 none), ARGV[5] attributes ('' none), ARGV[6] deduplication
-- window ms (0: the send has no deduplication id), then (the TENANT variant, for a send with a group id
-- to a standard mailbox) ARGV[7] the tenant, then the bodies. With a window, KEYS[N + 1..] hold one
-- deduplication key per body: a body whose key exists is not stored, and its id is the one the key
-- holds; the others are stored and their keys set to their new ids, expiring after the window.
-- Returns the ids, or -n if the mailbox has no room for the n new messages (nothing stored).
local before = promote(K)
local delay = tonumber(ARGV[3])
local capacity = tonumber(ARGV[4])
local attrs = ARGV[5]
local window = tonumber(ARGV[6])
--#if TENANT
local B = 7 -- ARGV[B + i] is body i
local meta = format_meta(NOW, 0, attrs ~= '' and 'G' or 'g', '', '') .. '||' .. ARGV[7]
--#else
local B = 6
local meta = format_meta(NOW, 0, attrs ~= '' and 'a' or '-', '', '')
--#end
local n = #ARGV - B
local ids = {}
local fresh = n
if window > 0 then
  for i = 1, n do
    local seen = redis.call('GET', KEYS[N + i])
    if seen then
      ids[i] = seen
      fresh = fresh - 1
    end
  end
end
if fresh == 0 then
  touch(K, TTL)
  return ids
end
if capacity > 0 and redis.call('HLEN', K.meta) + fresh > capacity then
  touch(K, TTL) -- promote() above may have created the ready list
  return -fresh
end
local first = new_id(K, fresh)
local j = 0
for i = 1, n do
  if not ids[i] then
    j = j + 1
    local id = format_id(first + j)
    redis.call('HSET', K.body, id, ARGV[B + i])
    redis.call('HSET', K.meta, id, meta)
    if attrs ~= '' then redis.call('HSET', K.attr, id, attrs) end
    if delay > 0 then
      redis.call('ZADD', K.timed, NOW + delay, id)
    else
      redis.call('RPUSH', K.ready, id)
    end
    if window > 0 then redis.call('SET', KEYS[N + i], id, 'NX', 'PX', window) end
    ids[i] = id
  end
end
if delay > 0 then
  announce_due(CHANNEL, NOW + delay, before)
else
  redis.call('PUBLISH', CHANNEL, 'r' .. fresh)
end
touch(K, TTL)
return ids
