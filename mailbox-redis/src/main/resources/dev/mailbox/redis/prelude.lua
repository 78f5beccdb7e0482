-- Shared by every script. KEYS[1..6] are one mailbox's keys, all under one hash tag:
-- ready (LIST of ids, FIFO), timed (ZSET id -> due ms: delayed, nacked-with-timeout and in-flight
-- messages), body (HASH id -> bytes), meta (HASH id -> "enqueuedAtMs|deliveryCount|flag|due|token":
-- flag 'a' when the message has attributes; due and token those of the current delivery while in
-- flight, empty otherwise), attr (HASH id -> encoded attributes), seq (id counter). A message is in
-- exactly one of ready and timed.
-- ARGV[1] is the mailbox's wake channel, ARGV[2] the key TTL in ms (0 for none).
-- Redis 5+ replicates scripts by their effects, so reading TIME before writing is safe.

local function keys_at(i)
  return {ready = KEYS[i], timed = KEYS[i + 1], body = KEYS[i + 2], meta = KEYS[i + 3],
          attr = KEYS[i + 4], seq = KEYS[i + 5]}
end

local K = keys_at(1)
local CHANNEL = ARGV[1]
local TTL = tonumber(ARGV[2])
local clock = redis.call('TIME')
-- deadlines are the server's time, never a client's
local NOW = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- A waiter never sleeps longer than this without re-reading deadlines (WakeHub), so only a new
-- deadline sooner than that needs announcing.
local HORIZON = __HORIZON_MS__

local function parse_meta(m)
  local enqueued, count, flag, due, token = string.match(m, '^(%d+)|(%d+)|(.)|(%d*)|(.*)$')
  return enqueued, tonumber(count), flag, tonumber(due), token
end

local function format_meta(enqueued, count, flag, due, token)
  return enqueued .. '|' .. count .. '|' .. flag .. '|' .. due .. '|' .. token
end

local function earliest(k)
  local e = redis.call('ZRANGE', k.timed, 0, 0, 'WITHSCORES')
  if e[2] then return tonumber(e[2]) end
  return nil
end

-- Makes visible every message whose delay or visibility timeout has ended, in due order, before
-- anything else happens, so messages are delivered in the order they became visible. A lapsed
-- delivery's token stays in meta but no longer counts: its due time has passed.
-- Returns the earliest deadline still pending, or nil.
local function promote(k)
  local first = earliest(k)
  if first == nil or first > NOW then return first end
  local due = redis.call('ZRANGEBYSCORE', k.timed, '-inf', NOW, 'LIMIT', 0, 1000)
  if #due > 0 then
    redis.call('RPUSH', k.ready, unpack(due))
    redis.call('ZREM', k.timed, unpack(due))
  end
  return earliest(k)
end

local function touch(k, ttl)
  if ttl > 0 then
    for _, key in ipairs({k.ready, k.timed, k.body, k.meta, k.attr, k.seq}) do
      redis.call('PEXPIRE', key, ttl)
    end
  end
end

local function new_id(k, n)
  return redis.call('INCRBY', k.seq, n) - n
end

local function format_id(n)
  return string.format('%012x', n)
end

-- Waiters sleep until the earliest deadline they know of; tell them when a new one comes first.
local function announce_due(channel, due, before)
  if (before == nil or due < before) and due - NOW < HORIZON then
    redis.call('PUBLISH', channel, 't' .. due)
  end
end

-- Returns 1 and the parsed meta if the handle is current; 0 if it is not the current delivery
-- (redelivered, nacked or deleted); -1 if its visibility lapsed.
local function check(id, token)
  local m = redis.call('HGET', K.meta, id)
  if not m then return 0 end
  local enqueued, count, flag, due, current = parse_meta(m)
  if current ~= token then return 0 end
  if due == nil or due <= NOW then return -1 end
  return 1, enqueued, count, flag
end

local function delete(k, id, flag)
  redis.call('HDEL', k.body, id)
  redis.call('HDEL', k.meta, id)
  if flag == 'a' then redis.call('HDEL', k.attr, id) end
end
