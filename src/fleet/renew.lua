-- Acquire or renew this node's lease. ARGV: node, seq, want (-1: no limit), keep, b, reserve,
-- max_nodes, lease_ms, known fleet id ('' if none), known version, id for a new fleet, ttl_ms.
-- keep is what the node promised not to exceed while this request is in flight: the grant never
-- goes below it (the node may have used that much), and grows only while growth is allowed.
local node, seq, want, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local b, reserve, max_nodes, lease_ms = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local known_id, known_version, new_id, ttl_ms = ARGV[9], tonumber(ARGV[10]), ARGV[11], tonumber(ARGV[12])

local now = now_ms()
local fleet = open_fleet(now, lease_ms, new_id, reserve, max_nodes)
detect_loss(fleet, now, lease_ms, known_id, known_version)
local leases = read_leases()
sweep(fleet, leases, now)

local mine = leases[node]
if mine and seq <= mine.seq then
  -- A late or repeated request: its answer would be stale; change nothing.
  save(fleet, ttl_ms)
  return reply(fleet, now, leases, { num(mine.grant), num(mine.grant), '1', '0' })
end

-- Nodes must agree on reserve and maxNodes; a live fleet keeps its own, an empty one adopts ours.
local others = 0
for id, _ in pairs(leases) do if id ~= node then others = others + 1 end end
if others == 0 then fleet.reserve, fleet.max_nodes = reserve, max_nodes end
local mismatch = (fleet.reserve ~= reserve or fleet.max_nodes ~= max_nodes)

-- The pool follows the smallest b among live nodes (during a rolling update b may differ).
local smallest_b = b
local held_by_others = 0
local wants = { [node] = want }
for id, lease in pairs(leases) do
  if id ~= node then
    smallest_b = math.min(smallest_b, lease.b)
    held_by_others = held_by_others + lease.grant
    wants[id] = lease.want
  end
end
local pool = smallest_b * (1 - fleet.reserve)
local base = math.max(pool - fleet.charged, 0)

-- Max-min fair share of what is not charged: small wants are met, the rest is split equally.
local order = {}
for id, w in pairs(wants) do order[#order + 1] = { id = id, want = (w < 0) and math.huge or w } end
table.sort(order, function(x, y) return x.want < y.want end)
local target, left = 0, base
for i, entry in ipairs(order) do
  local share = math.min(entry.want, left / (#order - i + 1))
  left = left - share
  if entry.id == node then target = share end
end

local old = mine and mine.grant or keep
local grant
if mismatch then
  grant = 0
elseif fleet.settled == 1 then
  local available = pool - held_by_others - fleet.charged
  grant = math.max(keep, math.min(target, available))
else
  grant = math.min(keep, old)
end
grant = math.max(grant, 0)

-- A mismatched node wants nothing, so that it does not shrink the others' fair shares.
local recorded_want = mismatch and 0 or want
redis.call('HSET', leases_key, node,
  num(grant) .. '|' .. (now + lease_ms) .. '|' .. num(recorded_want) .. '|' .. num(b) .. '|' .. seq)
leases[node] = { grant = grant, expires = now + lease_ms, want = recorded_want, b = b, seq = seq }
save(fleet, ttl_ms)
return reply(fleet, now, leases, { num(grant), num(target), '0', mismatch and '1' or '0' })
