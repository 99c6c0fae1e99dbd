-- Renew (or acquire) this node's lease; on the way, end the leases a node saw unrenewed for a
-- whole lease, settle what a valid refresh verified, end a hold, and tell a loss. ARGV:
--   1 node   2 seq   3 want (-1: no limit)   4 keep   5 floor_used   6 b   7 reserve
--   8 max_nodes   9 lease_ms   10 known id ('' if none)   11 known version   12 known epoch
--   13 acked seq   14 acked version   15 seen id   16 seen epoch   17 seen version
--   18 seen age ms (-1: none)   19 settle_through (0: none)   20 end_hold ('' : none)
--   21 an id for a new fleet or epoch   22 ttl_ms   23 floor (the static floor the node uses)
--   24 max_split_ms (the node's maxSplitSeconds: a new fleet's shape)
-- keep is what the node promised not to exceed of its lease while this call is in flight: the
-- grant never goes below it (the node may have used that much), and grows only while growth is
-- not held. floor_used is what it used of a static floor: a node that finds no static floor for
-- it here (a state created anew) must keep that in its lease too.
local node, seq, want, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local floor_used, b, reserve, max_nodes = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local lease_ms, known_id, known_version, known_epoch = tonumber(ARGV[9]), ARGV[10], tonumber(ARGV[11]), ARGV[12]
local acked_seq, acked_version, seen_id, seen_epoch = tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[15], ARGV[16]
local seen_version, seen_age = tonumber(ARGV[17]), tonumber(ARGV[18])
local settle_through, end_hold, new_id, ttl_ms = tonumber(ARGV[19]), ARGV[20], ARGV[21], tonumber(ARGV[22])
local node_floor, max_split_ms = tonumber(ARGV[23]), tonumber(ARGV[24])

local server_id, replicas = server()
local s = read_state(max_split_ms)
local loss = false
if not s then
  s = fresh_state(new_id, server_id, reserve, max_nodes, lease_ms, max_split_ms)
  -- A node that knew a fleet finds none: its state was lost (the fresh state holds growth).
  loss = known_id ~= ''
elseif s.server ~= server_id then
  -- A failover or a restart: this server's copy may lack writes the nodes were told about.
  new_epoch(s, new_id, known_version)
  s.server, loss = server_id, true
elseif known_id ~= '' and known_id ~= s.id then
  -- The state this node knew was lost and another node has since created a new one: a loss
  -- that node could not see. Hold again, timed by this node, which knows the older leases.
  new_epoch(s, new_id, 0)
  loss = true
elseif known_id == s.id and known_version > s.version then
  -- Older than a version this node saw: writes were lost.
  new_epoch(s, new_id, known_version)
  loss = true
end
sweep(s, seen_id, seen_epoch, seen_version, seen_age)

local mine, gone = s.leases[node], s.gone[node]
-- The lease this node last heard of ended here: written at or before a version a sweep passed
-- (or remembered as ended), or replaced by one registered after it (whose answer the node never
-- got). It was charged whole, so the charge covers whatever the node used of it.
local acked_here = known_id == s.id and acked_version > 0
local ended = (not mine and (gone ~= nil or (acked_here and acked_version <= s.swept)))
  or (mine ~= nil and acked_here and mine.since > acked_version)
-- A node that holds a grant (keep > 0) whose lease is missing, or older than the last renewal
-- Redis acknowledged to it, is looking at a state that lost writes.
if known_id == s.id and not loss and keep > 0 and acked_seq > 0
    and (not mine or mine.seq < acked_seq) and not ended then
  new_epoch(s, new_id, known_version)
  loss = true
end

-- Keeps S: charges settle only in the lineage and epoch the node's answers came from.
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

local ended_here = ended and not loss
if ended_here then keep, floor_used = 0, 0 end

local last_seq = (mine and mine.seq) or (gone and gone.seq) or 0
if seq <= last_seq then
  -- A late or repeated renewal, or one after this node's release: change nothing for it.
  bound_charges(s)
  save(s, ttl_ms)
  local g = mine and mine.grant or 0
  local slot = mine and mine.slot or 0
  return reply(s, replicas, loss, { num(g), num(g), '1', tostring(slot), '0' })
end

local held_by_others = 0
local smallest_b, largest_b = b, b
local slots, floors_in_use = 0, 0
for id, lease in pairs(s.leases) do
  if id ~= node then
    held_by_others = held_by_others + lease.grant
    smallest_b, largest_b = math.min(smallest_b, lease.b), math.max(largest_b, lease.b)
    slots = slots + lease.slot
    floors_in_use = floors_in_use + lease.slot * floor_of(s, lease.b)
  end
end

-- The static floors: max_nodes slots, and no more floor units than b's reserve minus the floors
-- charged (an ended lease's slot is free again only once its floor's charge settles). A node
-- keeps its slot while its lease lives; one without may take a slot that is free, except while
-- growth is held (a node that joins then takes one, as a fleet's first nodes must). A node
-- with no slot has no floor of its own: its whole budget is a lease.
local floor = floor_of(s, b)
local slot = mine and mine.slot or 0
local slot_free = slots < s.max_nodes
  and floors_in_use + charged(s, 'floor') + floor <= largest_b * s.reserve + 1e-9
if slot == 0 and slot_free and (not mine or s.held == 0) then slot = 1 end
if not mine and slot == 0 then
  -- No static floor here for a node that counted on one (a state created anew): what it used
  -- of that floor moves into its lease.
  keep = keep + floor_used
elseif slot == 1 and node_floor == 0 then
  -- A static floor for a node that had none replaces as much of its lease: it never grows by it.
  keep = math.max(keep - floor, 0)
end

local wants = { [node] = (slot == 0 and want >= 0) and want + floor or want }
for id, lease in pairs(s.leases) do
  if id ~= node then wants[id] = lease.want end
end

-- The pool follows the smallest b among live nodes (during a rolling update b may differ).
local pool = smallest_b * (1 - s.reserve)
local total_charged = charged(s, 'pool')

-- Max-min fair share of what is not charged: small wants are met, the rest is split equally.
local order = {}
for id, w in pairs(wants) do order[#order + 1] = { id = id, want = (w < 0) and math.huge or w } end
table.sort(order, function(x, y) return x.want < y.want end)
local target, left = 0, math.max(pool - total_charged, 0)
for i, entry in ipairs(order) do
  local share = math.min(entry.want, left / (#order - i + 1))
  left = left - share
  if entry.id == node then target = share end
end

-- Keeps C (docs/fleet-protocol.md, Invariants): the grant is what is left, or the keep.
local grant = keep
if s.held == 0 then
  grant = math.max(keep, math.min(target, pool - held_by_others - total_charged))
end
grant = math.max(grant, 0)

local written = s.version + 1
local since = mine and mine.since or written
put(s, 'n:' .. node, num(grant) .. '|' .. written .. '|' .. num(wants[node]) .. '|' .. num(b) .. '|' .. seq .. '|' .. slot .. '|' .. since)
s.leases[node] = { grant = grant, written = written, want = wants[node], b = b, seq = seq, slot = slot, since = since }
if gone then
  s.gone[node] = nil
  drop(s, 't:' .. node)
end
bound_charges(s)
save(s, ttl_ms)
return reply(s, replicas, loss, { num(grant), num(target), '0', tostring(slot), ended_here and '1' or '0' })
