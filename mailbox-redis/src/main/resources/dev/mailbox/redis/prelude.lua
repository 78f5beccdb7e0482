-- Shared by every script. Key layout version 3 (RedisMailbox.LAYOUT_VERSION; the class comment keeps
-- the history). KEYS[1..N] are one mailbox's keys, all under one hash tag, every one a script touches
-- (so that Redis Cluster refuses a call during a slot migration before it writes anything):
-- ready (LIST of ids, FIFO), timed (ZSET id -> due ms: delayed, nacked-with-timeout and in-flight
-- messages), body (HASH id -> bytes), meta (HASH id -> "enqueuedAtMs|deliveryCount|flag|due|token", and
-- for a message with a group "|originalId|groupId" after that: flag '-', 'a' when the message has
-- attributes, 'g' when it has a group, 'G' for both; due and token those of the current delivery while
-- in flight, empty otherwise, except that a FIFO message waiting out a nack timeout has that due and no
-- token; originalId is the id a FIFO dead letter had in its source, else empty), attr (HASH id ->
-- encoded attributes), seq (id counter), fence (STRING: the highest fencing epoch used on the mailbox;
-- since version 2, absent means 0). Version 3 added, as KEYS[8..N]:
--   FIFO mailboxes (N = 10): gq (ZSET, every score 0, "<group> <id>" for each message not in flight,
--   visible or waiting out a nack timeout: lexical order is group, then id, which is send order), gready
--   (LIST of the groups that may deliver now, each once), gstate (HASH group -> 'q' while it is in
--   gready, else how many of its messages are in flight; absent: neither). A FIFO message is in gq, in
--   timed (in flight), or in both (waiting out a nack timeout); ready is unused.
--   Standard mailboxes, fair between tenants (N = 9): tflight (HASH tenant -> its messages in flight),
--   tparked (ZSET, every score 0, "<tenant> <id>" for each visible message set aside while its tenant
--   was noisy). A tenant's message in flight is in timed as "<id> <tenant>", so that promote() sees a
--   tenant's delivery lapse without reading metas, and timed holds the member 'fair', scored 0, while
--   tflight or tparked may hold anything: every script that reads the earliest deadline learns it at no
--   cost, and one that does not meet it does no fairness work at all.
-- Send also takes deduplication keys after the N (STRING, since version 2: the message id first sent
-- under a deduplication id, expiring after the window).
-- Group ids (SQS's MessageGroupId characters) hold no space, so '<group> ' and '<group>!' bound a
-- group's members in gq and tparked.
-- ARGV[1] is the mailbox's wake channel, ARGV[2] the key TTL in ms (0 for none).
-- Lines '--#if NAME', '--#else', '--#end' are resolved when the scripts are loaded (Scripts.variant):
-- the FIFO variants keep the FIFO branches, the standard ones the others, so neither pays for both.
-- Redis 5+ replicates scripts by their effects, so reading TIME before writing is safe.

--#if FIFO
local N = 10
-- queued counts the groups a script queued, for the wake-up notice
local function keys_at(i)
  return {ready = KEYS[i], timed = KEYS[i + 1], body = KEYS[i + 2], meta = KEYS[i + 3],
          attr = KEYS[i + 4], seq = KEYS[i + 5], fence = KEYS[i + 6],
          gq = KEYS[i + 7], gready = KEYS[i + 8], gstate = KEYS[i + 9], queued = 0}
end
--#else
local N = 9
local function keys_at(i)
  return {ready = KEYS[i], timed = KEYS[i + 1], body = KEYS[i + 2], meta = KEYS[i + 3],
          attr = KEYS[i + 4], seq = KEYS[i + 5], fence = KEYS[i + 6],
          tflight = KEYS[i + 7], tparked = KEYS[i + 8]}
end
--#end

local K = keys_at(1)
local CHANNEL = ARGV[1]
local TTL = tonumber(ARGV[2])
local clock = redis.call('TIME')
-- deadlines are the server's time, never a client's
local NOW = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- A waiter never sleeps longer than this without re-reading deadlines (WakeHub), so only a new
-- deadline sooner than that needs announcing.
local HORIZON = __HORIZON_MS__

-- rest is '' for a message without a group, else "|originalId|groupId".
local function parse_meta(m)
  local enqueued, count, flag, due, token, rest = string.match(m, '^(%d+)|(%d+)|(.)|(%d*)|([^|]*)(.*)$')
  return enqueued, tonumber(count), flag, tonumber(due), token, rest
end

local function format_meta(enqueued, count, flag, due, token)
  return enqueued .. '|' .. count .. '|' .. flag .. '|' .. due .. '|' .. token
end

-- The group id in a meta's rest (nil for none), and the id the message had before it was dead-lettered
-- into this FIFO mailbox ('' if none).
local function group_of(rest)
  if rest == '' then return nil, '' end
  local original, group = string.match(rest, '^|([^|]*)|(.*)$')
  return group, original
end

-- The earliest deadline in k.timed, or nil. Notes in k.fair whether the member 'fair' is there (scored
-- 0, it comes first).
local function earliest(k)
  local e = redis.call('ZRANGE', k.timed, 0, 0, 'WITHSCORES')
  k.fair = e[1] == 'fair'
  if k.fair then
    e = redis.call('ZRANGE', k.timed, 1, 1, 'WITHSCORES')
  end
  if e[2] then return tonumber(e[2]) end
  return nil
end

-- Makes visible every message whose delay or visibility timeout has ended, in due order, before
-- anything else happens, so messages are delivered in the order they became visible. A lapsed
-- delivery's token stays in meta but no longer counts: its due time has passed. A tenant's lapsed
-- delivery ("<id> <tenant>") leaves its tenant's in-flight count; only a mailbox with 'fair' in timed
-- can have one, so the others do not look. (The tenant code here and elsewhere in the standard scripts
-- is written out where it is used, not in helpers: every helper a script defines is a closure made on
-- each call, and a mailbox without tenants should not pay for them.)
-- Returns the earliest deadline still pending, or nil.
local function promote(k)
  local first = earliest(k)
  if first == nil or first > NOW then return first end
  -- all of them, 1000 a call: what this script pushes next must go behind every message already due
  local due
  repeat
    due = redis.call('ZRANGEBYSCORE', k.timed, '(0', NOW, 'LIMIT', 0, 1000)
    if #due > 0 then
      redis.call('ZREM', k.timed, unpack(due))
      if k.fair and string.find(table.concat(due, ','), ' ', 1, true) then
        local tflight = k.tflight
        for i, member in ipairs(due) do
          local space = string.find(member, ' ', 1, true)
          if space then
            local t = string.sub(member, space + 1)
            due[i] = string.sub(member, 1, space - 1)
            if redis.call('HINCRBY', tflight, t, -1) <= 0 then redis.call('HDEL', tflight, t) end
          end
        end
      end
      redis.call('RPUSH', k.ready, unpack(due))
    end
  until #due < 1000
  return earliest(k)
end

-- FIFO: group g has nothing in flight. Queues it for delivery if it holds a message, else forgets it.
-- Its head may be waiting out a nack timeout; then the receive that meets it un-queues it, which costs
-- less than reading the head's meta at every release. Returns 1 if it queued it.
local function queue_group(k, g)
  if redis.call('ZRANGEBYLEX', k.gq, '(' .. g .. ' ', '(' .. g .. '!', 'LIMIT', 0, 1)[1] then
    redis.call('HSET', k.gstate, g, 'q')
    redis.call('RPUSH', k.gready, g)
    return 1
  end
  redis.call('HDEL', k.gstate, g)
  return 0
end

-- FIFO: n of group g's messages left flight (n = 0: a message of g stopped waiting out a nack
-- timeout). When none is left in flight, queues the group if it can deliver. Returns 1 if it did.
local function release(k, g, n)
  if n > 0 then
    if redis.call('HINCRBY', k.gstate, g, -n) > 0 then return 0 end
  elseif redis.call('HEXISTS', k.gstate, g) == 1 then
    return 0 -- in flight, or queued already
  end
  return queue_group(k, g)
end

-- FIFO's promote(): a lapsed delivery goes back into its group (gq keeps groups in send order, so it
-- is its group's head again), a message whose nack timeout ended just leaves timed (it waits in gq
-- already), and each group with nothing left in flight is queued if it can deliver. Counts the groups
-- queued in k.queued. Returns the earliest deadline still pending, or nil.
local function promote_fifo(k)
  local first = earliest(k)
  if first == nil or first > NOW then return first end
  local due
  repeat
    due = redis.call('ZRANGEBYSCORE', k.timed, '-inf', NOW, 'LIMIT', 0, 1000)
    if #due > 0 then
      local left = {}
      for _, id in ipairs(due) do
        local m = redis.call('HGET', k.meta, id)
        if m then
          local _, _, _, _, token, rest = parse_meta(m)
          local g = group_of(rest) or ''
          if token ~= '' then
            redis.call('ZADD', k.gq, 0, g .. ' ' .. id)
            left[g] = (left[g] or 0) + 1
          else
            left[g] = left[g] or 0
          end
        end
      end
      redis.call('ZREM', k.timed, unpack(due))
      for g, n in pairs(left) do
        k.queued = k.queued + release(k, g, n)
      end
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
--#if FIFO
    for _, key in ipairs({k.gq, k.gready, k.gstate}) do
      redis.call('PEXPIRE', key, ttl)
    end
--#else
    if k.fair == nil then -- a script that did not read the earliest deadline
      k.fair = redis.call('ZRANGE', k.timed, 0, 0)[1] == 'fair'
    end
    if k.fair then
      redis.call('PEXPIRE', k.tflight, ttl)
      redis.call('PEXPIRE', k.tparked, ttl)
    end
--#end
  end
end

local function new_id(k, n)
  return redis.call('INCRBY', k.seq, n) - n
end

-- Ids are 12 hex digits (more only past 2^48 messages), so their text order is send order.
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
  local enqueued, count, flag, due, current, rest = parse_meta(m)
  if current ~= token then return 0 end
  if due == nil or due <= NOW then return -1, enqueued, count, flag, rest end
  return 1, enqueued, count, flag, rest
end

local function delete(k, id, flag)
  redis.call('HDEL', k.body, id)
  redis.call('HDEL', k.meta, id)
  if flag == 'a' or flag == 'G' then redis.call('HDEL', k.attr, id) end
end

-- Acknowledges ARGV[first], ARGV[first + 1], ... as (id, token) pairs: deletes each message whose
-- handle is its most recent delivery's, in flight or lapsed (late acknowledgement, as SQS: a nack or a
-- new delivery changes the token, so neither a nacked nor a superseded handle gets here). A lapsed
-- message is still in timed until a script promotes it, then in ready (or, a noisy tenant's, set aside
-- in tparked; FIFO: back in its group in gq): LREM from the tail costs the messages queued behind it.
-- A FIFO group whose last message in flight is acknowledged is queued if it can deliver (counted in
-- K.queued). Returns one code per pair, 1 for deleted and check()'s 0 for stale, so the caller can name
-- every stale handle.
local function acknowledge_pairs(first)
  local codes = {}
--#if FIFO
  local left = {}
--#end
  for i = first, #ARGV, 2 do
    local id = ARGV[i]
    local code, _, _, flag, rest = check(id, ARGV[i + 1])
    if code ~= 0 then
--#if FIFO
      local g = group_of(rest) or ''
      if redis.call('ZREM', K.timed, id) == 1 then
        left[g] = (left[g] or 0) + 1
      else
        redis.call('ZREM', K.gq, g .. ' ' .. id)
      end
--#else
      local tenant = (flag == 'g' or flag == 'G') and string.match(rest, '^|[^|]*|(.*)$') or nil
      if redis.call('ZREM', K.timed, tenant and id .. ' ' .. tenant or id) == 1 then
        if tenant and redis.call('HINCRBY', K.tflight, tenant, -1) <= 0 then -- one fewer in flight
          redis.call('HDEL', K.tflight, tenant)
        end
      elseif code == -1 and redis.call('LREM', K.ready, -1, id) == 0 and tenant then
        redis.call('ZREM', K.tparked, tenant .. ' ' .. id) -- set aside
      end
--#end
      delete(K, id, flag)
      code = 1
    end
    codes[#codes + 1] = code
  end
--#if FIFO
  for g, n in pairs(left) do
    K.queued = K.queued + release(K, g, n)
  end
--#end
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
