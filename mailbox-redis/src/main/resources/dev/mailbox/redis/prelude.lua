-- Shared by every script. KEYS[1..7] are one mailbox's keys, all under one hash tag:
-- ready (LIST of ids, FIFO), timed (ZSET id -> due ms: delayed, nacked-with-timeout and in-flight
-- messages), body (HASH id -> bytes), meta (HASH id -> "enqueuedAtMs|deliveryCount"),
-- attr (HASH id -> encoded attributes, only when there are any), tok (HASH id -> receipt token,
-- only while in flight), seq (id counter). A message is in exactly one of ready and timed.
-- ARGV[1] is the mailbox's wake channel, ARGV[2] the key TTL in ms (0 for none).
if redis.replicate_commands then pcall(redis.replicate_commands) end

local function keys_at(i)
  return {ready = KEYS[i], timed = KEYS[i + 1], body = KEYS[i + 2], meta = KEYS[i + 3],
          attr = KEYS[i + 4], tok = KEYS[i + 5], seq = KEYS[i + 6]}
end

local K = keys_at(1)
local CHANNEL = ARGV[1]
local TTL = tonumber(ARGV[2])
local clock = redis.call('TIME')
-- deadlines are the server's time, never a client's
local NOW = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local function earliest(k)
  local e = redis.call('ZRANGE', k.timed, 0, 0, 'WITHSCORES')
  if e[2] then return tonumber(e[2]) end
  return nil
end

-- Makes visible every message whose delay or visibility timeout has ended, in due order, before
-- anything else happens, so messages are delivered in the order they became visible.
local function promote(k)
  local due = redis.call('ZRANGEBYSCORE', k.timed, '-inf', NOW, 'LIMIT', 0, 1000)
  if #due > 0 then
    redis.call('RPUSH', k.ready, unpack(due))
    redis.call('ZREM', k.timed, unpack(due))
    redis.call('HDEL', k.tok, unpack(due))
  end
end

local function touch(k, ttl)
  if ttl > 0 then
    for _, key in ipairs({k.ready, k.timed, k.body, k.meta, k.attr, k.tok, k.seq}) do
      redis.call('PEXPIRE', key, ttl)
    end
  end
end

local function new_id(k, n)
  local last = redis.call('INCRBY', k.seq, n)
  return last - n
end

local function format_id(n)
  return string.format('%012x', n)
end

-- Waiters sleep until the earliest deadline they know of; tell them when a new one comes first.
local function announce_due(channel, due, before)
  if before == nil or due < before then
    redis.call('PUBLISH', channel, 't' .. due)
  end
end

-- 1: current; 0: not the current delivery (redelivered, nacked or deleted); -1: visibility lapsed.
local function check(id, token)
  if redis.call('HGET', K.tok, id) ~= token then return 0 end
  local s = redis.call('ZSCORE', K.timed, id)
  if not s or tonumber(s) <= NOW then return -1 end
  return 1
end
