-- Read only (the web console's peek): changes nothing. ARGV[3] the most messages, ARGV[4] the most entries of
-- each kind read to find them. Returns {now, then per message: id, body, enqueuedAt, deliveryCount, state,
-- attrs}, state 'q' (queued), 'd' (delayed) or 'f' (in flight). Queued messages come first, in the order a
-- receive would take them, then the later entries of timed, soonest first: in flight when their meta names a
-- delivery, else delayed. A FIFO message's id is the one it shows (Message.id(): a dead letter's first id).
local max = tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
local out = {NOW}
local n = 0
local shown = {}
local function add(id, state)
  if n >= max or shown[id] then return end
  local body = redis.call('HGET', K.body, id)
  local m = redis.call('HGET', K.meta, id)
  if not (body and m) then return end
  local enqueued, count, flag, _, token, rest = parse_meta(m)
  if state == nil then
    if token ~= '' then state = 'f' else state = 'd' end
  end
  shown[id] = true
--#if FIFO
  local _, original = group_of(rest)
  out[#out + 1] = original ~= '' and original or id
--#else
  out[#out + 1] = id
--#end
  out[#out + 1] = body
  out[#out + 1] = tonumber(enqueued)
  out[#out + 1] = count
  out[#out + 1] = state
  out[#out + 1] = (flag == 'a' or flag == 'G') and (redis.call('HGET', K.attr, id) or '') or ''
  n = n + 1
end
--#if FIFO
-- Groups in the order receives would serve them: those in gready, then those with a lapsed delivery (due in
-- timed with a token: promote_fifo() puts it back at its group's head), then the rest of gq (groups waiting for
-- a message in flight, or for a head's nack timeout). Within a group, by id, which is send order. A message
-- waiting out a nack timeout (in gq and, later than now, in timed) is shown with timed's.
local order = {}
local listed = {}
local lapsed = {}
local function list(g)
  if not listed[g] then
    listed[g] = true
    order[#order + 1] = g
  end
end
for _, g in ipairs(redis.call('LRANGE', K.gready, 0, budget - 1)) do list(g) end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.timed, '-inf', NOW, 'LIMIT', 0, budget)) do
  local m = redis.call('HGET', K.meta, id)
  if m then
    local _, _, _, _, token, rest = parse_meta(m)
    if token ~= '' then
      local g = group_of(rest) or ''
      lapsed[g] = lapsed[g] or {}
      table.insert(lapsed[g], id)
      list(g)
    end
  end
end
for _, member in ipairs(redis.call('ZRANGEBYLEX', K.gq, '-', '+', 'LIMIT', 0, budget)) do
  list(string.match(member, '^[^ ]*'))
end
for _, g in ipairs(order) do
  if n >= max then break end
  local ids = lapsed[g] or {}
  -- a group has at most one receive's messages waiting out a nack timeout (10), skipped here
  for _, member in ipairs(redis.call('ZRANGEBYLEX', K.gq, '(' .. g .. ' ', '(' .. g .. '!', 'LIMIT', 0,
                                     max - n + 10)) do
    ids[#ids + 1] = string.sub(member, #g + 2)
  end
  table.sort(ids) -- ids have one width: text order is send order
  for _, id in ipairs(ids) do
    local due = redis.call('ZSCORE', K.timed, id)
    if due == false or tonumber(due) <= NOW then add(id, 'q') end
  end
end
--#else
for _, id in ipairs(redis.call('LRANGE', K.ready, 0, max - 1)) do add(id, 'q') end
if n < max then
  -- promote() appends what is due in due order; '(0' leaves out the member 'fair' (score 0), and a tenant's
  -- delivery is '<id> <tenant>'
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', K.timed, '(0', NOW, 'LIMIT', 0, max - n)) do
    add(string.match(member, '^[^ ]+'), 'q')
  end
end
if n < max then
  -- set aside while their tenants were noisy: '<tenant> <id>'
  for _, member in ipairs(redis.call('ZRANGEBYLEX', K.tparked, '-', '+', 'LIMIT', 0, max - n)) do
    add(string.match(member, ' (.*)$'), 'q')
  end
end
--#end
if n < max then
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', K.timed, '(' .. NOW, '+inf', 'LIMIT', 0, max - n)) do
    add(string.match(member, '^[^ ]+'), nil)
  end
end
return out
