-- Renew (or acquire) this node's lease; on the way, advance the fleet clock, settle what a valid
-- refresh verified, end a hold, and tell a loss. ARGV:
--   1 node   2 seq   3 want (-1: no limit)   4 keep   5 b   6 reserve   7 max_nodes   8 lease_ms
--   9 known id ('' if none)   10 known version   11 known epoch   12 acked seq
--   13 clock_to (-1: none)   14 settle_through (0: none)   15 end_hold ('' : none)
--   16 an id for a new fleet or epoch   17 ttl_ms
-- keep is what the node promised not to exceed while this call is in flight: the grant never goes
-- below it (the node may have used that much), and grows only while growth is not held.
local node, seq, want, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local b, reserve, max_nodes, lease_ms = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local known_id, known_version, known_epoch = ARGV[9], tonumber(ARGV[10]), ARGV[11]
local acked_seq, clock_to, settle_through, end_hold = tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[15]
local new_id, ttl_ms = ARGV[16], tonumber(ARGV[17])

local server_id, replicas = server()
local s = read_state()
local loss = false
if not s then
  s = fresh_state(new_id, server_id, reserve, max_nodes)
  -- A node that knew a fleet finds none: its state was lost (the fresh state holds growth).
  loss = known_id ~= ''
elseif s.server ~= server_id then
  -- A failover or a restart: this server's copy may lack writes the nodes were told about.
  new_epoch(s, new_id, known_version)
  s.server, loss = server_id, true
elseif known_id == s.id and known_version > s.version then
  -- Older than a version this node saw: writes were lost.
  new_epoch(s, new_id, known_version)
  loss = true
end
advance(s, known_id, clock_to)
sweep(s)

local mine, gone = s.leases[node], s.gone[node]
-- A node that holds a grant (keep > 0) whose lease is missing, or older than the last renewal
-- Redis acknowledged to it, is looking at a state that lost writes.
if known_id == s.id and not loss and keep > 0 and acked_seq > 0
    and (not mine or mine.seq < acked_seq) and not gone then
  new_epoch(s, new_id, known_version)
  loss = true
end

if known_id == s.id and known_epoch == s.epoch then
  if settle_through > 0 then
    for n, _ in pairs(s.charges) do
      if n <= settle_through then
        s.charges[n] = nil
        drop(s, 'c:' .. n)
      end
    end
  end
  if end_hold == s.epoch then s.held = 0 end
end

local last_seq = (mine and mine.seq) or (gone and gone.seq) or 0
if seq <= last_seq then
  -- A late or repeated renewal, or one after this node's release: change nothing for it.
  bound_charges(s)
  save(s, ttl_ms)
  local g = mine and mine.grant or 0
  return reply(s, replicas, loss, { num(g), num(g), '1', '0' })
end

-- Nodes must agree on reserve and maxNodes; a live fleet keeps its own, an empty one adopts ours.
local live, held_by_others = 1, 0
local smallest_b, largest_b = b, b
local wants = { [node] = want }
for id, lease in pairs(s.leases) do
  if id ~= node then
    live = live + 1
    held_by_others = held_by_others + lease.grant
    smallest_b, largest_b = math.min(smallest_b, lease.b), math.max(largest_b, lease.b)
    wants[id] = lease.want
  end
end
if live == 1 then s.reserve, s.max_nodes = reserve, max_nodes end
local mismatch = (s.reserve ~= reserve or s.max_nodes ~= max_nodes)
if mismatch then wants[node] = 0 end

-- The pool follows the smallest b among live nodes (during a rolling update b may differ). Nodes
-- beyond maxNodes use floors nobody set aside: they come out of the pool lent.
local pool = smallest_b * (1 - s.reserve)
local floor = largest_b * s.reserve / s.max_nodes
local lent = math.max(pool - math.max(live - s.max_nodes, 0) * floor, 0)
local total_charged = charged(s)

-- Max-min fair share of what is not charged: small wants are met, the rest is split equally.
local order = {}
for id, w in pairs(wants) do order[#order + 1] = { id = id, want = (w < 0) and math.huge or w } end
table.sort(order, function(x, y) return x.want < y.want end)
local target, left = 0, math.max(lent - total_charged, 0)
for i, entry in ipairs(order) do
  local share = math.min(entry.want, left / (#order - i + 1))
  left = left - share
  if entry.id == node then target = share end
end

local grant = keep
if not mismatch and s.held == 0 then
  grant = math.max(keep, math.min(target, lent - held_by_others - total_charged))
end
grant = math.max(grant, 0)

put(s, 'n:' .. node, num(grant) .. '|' .. num(s.clock + lease_ms) .. '|' .. num(wants[node]) .. '|' .. num(b) .. '|' .. seq)
s.leases[node] = { grant = grant, expires = s.clock + lease_ms, want = wants[node], b = b, seq = seq }
bound_charges(s)
save(s, ttl_ms)
return reply(s, replicas, loss, { num(grant), num(target), '0', mismatch and '1' or '0' })
