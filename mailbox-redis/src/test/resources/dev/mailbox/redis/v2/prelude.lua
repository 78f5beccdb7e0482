-- Shared by every script. Key layout version 2 (RedisMailbox.LAYOUT_VERSION; the class comment keeps
-- the history). KEYS[1..7] are one mailbox's keys, all under one hash tag:
-- ready (LIST of ids, FIFO), timed (ZSET id -> due ms: delayed, nacked-with-timeout and in-flight
-- messages), body (HASH id -> bytes), meta (HASH id -> "enqueuedAtMs|deliveryCount|flag|due|token":
-- flag 'a' when the message has attributes; due and token those of the current delivery while in
-- flight, empty otherwise), attr (HASH id -> encoded attributes), seq (id counter), fence (STRING:
-- the highest fencing epoch used on the mailbox; since version 2, absent means 0). A message is in
-- exactly one of ready and timed. Send also takes deduplication keys (STRING, since version 2: the
-- message id first sent under a deduplication id, expiring after the window), after the seven.
-- ARGV[1] is the mailbox's wake channel, ARGV[2] the key TTL in ms (0 for none).
-- Redis 5+ replicates scripts by their effects, so reading TIME before writing is safe.

local function keys_at(i)
  return {ready = KEYS[i], timed = KEYS[i + 1], body = KEYS[i + 2], meta = KEYS[i + 3],
          attr = KEYS[i + 4], seq = KEYS[i + 5], fence = KEYS[i + 6]}
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
  -- all of them, 1000 a call: what this script pushes next must go behind every message already due
  local due
  repeat
    due = redis.call('ZRANGEBYSCORE', k.timed, '-inf', NOW, 'LIMIT', 0, 1000)
    if #due > 0 then
      redis.call('RPUSH', k.ready, unpack(due))
      redis.call('ZREM', k.timed, unpack(due))
    end
  until #due < 1000
  return earliest(k)
end

local function touch(k, ttl)
  if ttl > 0 then
    for _, key in ipairs({k.ready, k.timed, k.body, k.meta, k.attr, k.fence}) do
      redis.call('PEXPIRE', key, ttl)
    end
    -- the id counter outlives every deduplication key that may hold one of its ids
    redis.call('PEXPIRE', k.seq, math.max(ttl, __DEDUP_WINDOW_MS__))
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
-- (redelivered, nacked or deleted); -1 and the parsed meta if it is the most recent delivery but its
-- visibility lapsed (or was ended by an extend to zero).
local function check(id, token)
  local m = redis.call('HGET', K.meta, id)
  if not m then return 0 end
  local enqueued, count, flag, due, current = parse_meta(m)
  if current ~= token then return 0 end
  if due == nil or due <= NOW then return -1, enqueued, count, flag end
  return 1, enqueued, count, flag
end

local function delete(k, id, flag)
  redis.call('HDEL', k.body, id)
  redis.call('HDEL', k.meta, id)
  if flag == 'a' then redis.call('HDEL', k.attr, id) end
end

-- Acknowledges ARGV[first], ARGV[first + 1], ... as (id, token) pairs: deletes each message whose
-- handle is its most recent delivery's, in flight or lapsed (late acknowledgement, as SQS: a nack or a
-- new delivery changes the token, so neither a nacked nor a superseded handle gets here). A lapsed
-- message is still in timed until a script promotes it, then in ready, pushed at the tail: LREM from the
-- tail costs the messages queued behind it. Returns one code per pair, 1 for deleted and check()'s 0 for
-- stale, so the caller can name every stale handle.
local function acknowledge_pairs(first)
  local codes = {}
  for i = first, #ARGV, 2 do
    local id = ARGV[i]
    local code, _, _, flag = check(id, ARGV[i + 1])
    if code == 1 then
      redis.call('ZREM', K.timed, id)
      delete(K, id, flag)
    elseif code == -1 then
      if redis.call('ZREM', K.timed, id) == 0 then
        redis.call('LREM', K.ready, -1, id)
      end
      delete(K, id, flag)
      code = 1
    end
    codes[#codes + 1] = code
  end
  return codes
end

-- Whether a < b, for epochs as the decimal strings Java sends (no sign, no leading zeros): compared
-- as text, so every long stays exact (a Lua number would round above 2^53).
local function epoch_below(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

-- The fence check of a call made under fencing epochs lowest..highest ('0' and '0' for a call that is
-- not fenced, which costs nothing here): refused if any of its epochs is below the fence, else the
-- fence rises to highest. It costs one GET, plus one SET the first time an epoch is used. Scripts call
-- it before they write anything and return what it returns, if anything, so a refused call changes
-- nothing; RedisMailbox turns the error into a FencedException.
local function fence(lowest, highest)
  if highest == '0' then return nil end
  local current = redis.call('GET', K.fence) or '0' -- no key (a version 1 mailbox): 0
  if epoch_below(lowest, current) then
    return redis.error_reply('FENCED ' .. lowest .. ' ' .. current)
  end
  if epoch_below(current, highest) then
    if TTL > 0 then
      redis.call('SET', K.fence, highest, 'PX', TTL)
    else
      redis.call('SET', K.fence, highest)
    end
  end
  return nil
end
