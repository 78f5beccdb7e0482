-- ARGV[3] the lowest and ARGV[4] the highest fencing epoch of the call (0 and 0: not fenced), ARGV[5]
-- max messages, ARGV[6] visibility ms, ARGV[7] nonce (unique per call), ARGV[8] max receive count (0:
-- no redrive), ARGV[9] dead-letter channel, ARGV[10] dead-letter key TTL, ARGV[11..] pairs of (id,
-- token) to acknowledge before receiving, as ack.lua does. KEYS[N + 1..2N], with a redrive policy, are
-- the dead-letter mailbox's keys (same hash slot). Returns {now, earliest due or -1, {one acknowledge code
-- per pair}, then per message: id, body, enqueuedAt, deliveryCount, token, attrs}, and after those, if
-- a message has a tenant, one list with each message's tenant ('' for none).
--
-- Fairness (SQS's fair queues): a tenant is noisy while it has at least __NOISY_MIN__ messages in
-- flight and they are more than __NOISY_SHARE__ % of the mailbox's (Limits.isNoisyTenant; the total is
-- what timed holds, so delayed messages and nack timeouts count as in flight). A noisy tenant's
-- messages met in ready are set aside in tparked; a receive takes ready's next message unless a
-- set-aside one of a tenant that is quiet again is older, and when neither is there, the head of the
-- noisy tenant with the fewest in flight, so fairness never returns less. Messages without a tenant
-- take the plain path: no call beyond the ones the mailbox made before fairness, unless 'fair' is in
-- timed.
local refused = fence(ARGV[3], ARGV[4])
if refused then return refused end
local settled = acknowledge_pairs(11)
local before = promote(K)
local max = tonumber(ARGV[5])
local due = NOW + tonumber(ARGV[6])
local nonce = ARGV[7]
local max_receives = tonumber(ARGV[8])
local out = {NOW, before or -1, settled}
local n = 0
local tenants -- each delivered message's tenant, from the first one that has one
local F -- this call's fairness bookkeeping (fairness()), made when it meets a tenant or 'fair'

local function dead_letter(id, body, enqueued, flag, rest)
  local D = keys_at(N + 1)
  promote(D)
  local moved = format_id(new_id(D, 1) + 1)
  redis.call('HSET', D.body, moved, body)
  redis.call('HSET', D.meta, moved, format_meta(enqueued, 0, flag, '', '') .. rest)
  if flag == 'a' or flag == 'G' then redis.call('HSET', D.attr, moved, redis.call('HGET', K.attr, id)) end
  redis.call('RPUSH', D.ready, moved)
  delete(K, id, flag)
  redis.call('PUBLISH', ARGV[9], 'r1')
  touch(D, tonumber(ARGV[10]))
end

-- One closure for everything fairness needs, so that a call without tenants makes only this one.
local function fairness()
  local tflight, tparked = K.tflight, K.tparked
  local known = not K.fair -- no 'fair': no tenant has anything in flight or set aside
  local f = {flight = {}, total = redis.call('ZCARD', K.timed) - (K.fair and 1 or 0)}
  f.parked = known and {} or nil -- tenant -> its first set-aside id; nil until read

  local function mark()
    if not K.fair then
      redis.call('ZADD', K.timed, 0, 'fair')
      K.fair = true
    end
  end

  local function flying(t)
    local c = f.flight[t]
    if c == nil then
      c = known and 0 or tonumber(redis.call('HGET', tflight, t) or 0)
      f.flight[t] = c
    end
    return c
  end

  function f.noisy(t)
    local c = flying(t)
    return c >= __NOISY_MIN__ and c * 100 > f.total * __NOISY_SHARE__
  end

  function f.delivered(t)
    f.total = f.total + 1
    if t then
      f.flight[t] = flying(t) + 1
      redis.call('HINCRBY', tflight, t, 1)
      mark()
    end
  end

  -- the set-aside tenants and their heads, one ZRANGEBYLEX per tenant
  local function parked()
    if f.parked == nil then
      f.parked = {}
      local from = '-'
      while true do
        local m = redis.call('ZRANGEBYLEX', tparked, from, '+', 'LIMIT', 0, 1)[1]
        if not m then break end
        local space = string.find(m, ' ', 1, true)
        local t = string.sub(m, 1, space - 1)
        f.parked[t] = string.sub(m, space + 1)
        from = '(' .. t .. '!'
      end
    end
    return f.parked
  end

  function f.park(t, id)
    redis.call('ZADD', tparked, 0, t .. ' ' .. id)
    mark()
    local p = parked()
    if p[t] == nil or id < p[t] then p[t] = id end
  end

  -- ready's next message whose tenant is not noisy, setting aside those that are; kept in f.pending
  -- until taken (put back at the head of ready if the call ends first)
  local function next_ready()
    local p = f.pending
    if p and p[3] and f.noisy(p[3]) then -- its tenant turned noisy meanwhile
      f.park(p[3], p[1])
      p = nil
    end
    while not p do
      local id = redis.call('LPOP', K.ready)
      if not id then break end
      local m = redis.call('HGET', K.meta, id)
      local t
      if m then
        local _, _, flag, _, _, rest = parse_meta(m)
        if flag == 'g' or flag == 'G' then t = string.match(rest, '^|[^|]*|(.*)$') end
      end
      if t and f.noisy(t) then
        f.park(t, id)
      else
        p = {id, m, t}
      end
    end
    f.pending = p
    return p
  end

  -- The next message to deliver, as (id, meta), with set-aside messages about: the earlier of ready's
  -- next and the set-aside head of a tenant that is quiet again, else the set-aside head of the noisy
  -- tenant with the fewest in flight.
  function f.next()
    local p = next_ready()
    local quiet, quiet_head, least, least_head
    for t, head in pairs(parked()) do
      if not f.noisy(t) then
        if quiet == nil or head < quiet_head then quiet, quiet_head = t, head end
      elseif least == nil or flying(t) < flying(least) or (flying(t) == flying(least) and head < least_head) then
        least, least_head = t, head
      end
    end
    if p and (quiet == nil or p[1] < quiet_head) then
      f.pending = nil
      return p[1], p[2]
    end
    local t, id = quiet or least, quiet_head or least_head
    if t == nil then return nil end
    redis.call('ZREM', tparked, t .. ' ' .. id)
    local after = redis.call('ZRANGEBYLEX', tparked, '(' .. t .. ' ' .. id, '(' .. t .. '!', 'LIMIT', 0, 1)[1]
    f.parked[t] = after and string.sub(after, #t + 2) or nil
    return id, redis.call('HGET', K.meta, id)
  end

  -- whether set-aside messages (may) exist, so that receives must look at them
  function f.busy()
    return f.parked == nil or next(f.parked) ~= nil
  end

  function f.finish()
    if f.pending then redis.call('LPUSH', K.ready, f.pending[1]) end
    if K.fair and not f.busy() and redis.call('HLEN', tflight) == 0 then
      redis.call('ZREM', K.timed, 'fair')
      K.fair = false
    end
  end

  return f
end

if K.fair then F = fairness() end
while n < max do
  local id, m, plain
  if F and F.busy() then
    id, m = F.next()
    if not id then break end
  else
    id = redis.call('LPOP', K.ready)
    if not id then break end
    m = redis.call('HGET', K.meta, id)
    plain = true
  end
  local enqueued, count, flag, rest = NOW, 0, '-', ''
  if m then
    local _
    enqueued, count, flag, _, _, rest = parse_meta(m)
  end
  local t
  if flag == 'g' or flag == 'G' then
    t = string.match(rest, '^|[^|]*|(.*)$')
    F = F or fairness()
  end
  if plain and t and F.noisy(t) then
    F.park(t, id) -- met on the plain path: set aside, and from now on the fair path decides
  else
    local body = redis.call('HGET', K.body, id)
    if not body then
      -- The message behind this id is gone. Only an acknowledgement that should have been refused
      -- leaves one: a handle that lapsed and was requeued, taken for current because the server's clock
      -- stepped back (a failover to a replica whose clock is behind). Delivering it would hand out a
      -- message with no body, again at every visibility timeout; drop what is left of it instead.
      delete(K, id, 'a')
    elseif max_receives > 0 and count >= max_receives then
      dead_letter(id, body, enqueued, flag, rest)
    else
      count = count + 1
      n = n + 1
      local token = nonce .. '-' .. n
      redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, due, token) .. rest)
      if t then
        redis.call('ZADD', K.timed, due, id .. ' ' .. t)
      else
        redis.call('ZADD', K.timed, due, id)
      end
      if F then F.delivered(t) end
      if t and not tenants then
        tenants = {}
        for i = 1, n - 1 do tenants[i] = '' end
      end
      if tenants then tenants[n] = t or '' end
      out[#out + 1] = id
      out[#out + 1] = body
      out[#out + 1] = tonumber(enqueued)
      out[#out + 1] = count
      out[#out + 1] = token
      out[#out + 1] = (flag == 'a' or flag == 'G') and redis.call('HGET', K.attr, id) or ''
    end
  end
end
if F then F.finish() end
if n > 0 then
  announce_due(CHANNEL, due, before)
  if before == nil or due < before then out[2] = due end
end
if tenants then out[#out + 1] = tenants end
touch(K, TTL)
return out
