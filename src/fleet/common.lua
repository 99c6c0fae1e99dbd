-- Shared by the fleet scripts. KEYS[1] holds a fleet's whole state, one hash, so that eviction,
-- DEL or FLUSHDB lose all of it or none of it:
--   meta fields  id, version, epoch, held, server, cseq, swept (every lease written at or before
--                this version and not renewed since has ended), and the fleet's shape (reserve,
--                max_nodes, lease_ms: set by the node that creates the state, adopted by all)
--   n:<node>     a live lease: "grant|written|want|b|seq|slot|since" (written: the version that
--                wrote it; slot: 1 if the node holds one of the max_nodes static floors, 0 if its
--                whole budget is leased; since: the version that registered it)
--   t:<node>     an ended lease (released or expired), kept so a late renewal cannot revive it
--                and its holder's next call is not taken for a loss: "written|seq"
--   c:<number>   units charged, numbered: "pool|floor" (an ended lease's grant, a release's used
--                part; and the static floor of an ended lease, which its slot cannot be given
--                again before the charge settles)
-- The invariants every script keeps: live grants + charged pool units <= the pool; static
-- floors of live leases + charged floor units <= the floors' share of b.
--
-- Time: Redis's clock never ends a lease. A lease ends when a node reports that it saw the
-- state at a version at least as new as the lease's, and that its own monotonic clock measured a
-- whole lease since it received that answer: the lease was written before that answer, so its
-- holder's deadline (less than a lease after its send) has passed. Charges settle by number.

local key = KEYS[1]

local function num(x) return string.format('%.17g', x) end

local function split(s)
  local out = {}
  for part in string.gmatch(s, '[^|]+') do out[#out + 1] = part end
  return out
end

-- The server we run on: a failover or a restart changes it, and the state it holds may then be
-- older than what the nodes were told. Also the replicas connected now, for WAIT.
-- One INFO call for both sections (Redis 7 takes several). Only replicas that are online count
-- for WAIT: one in a full sync neither holds the writes nor acknowledges them.
local function server()
  local info = redis.call('INFO', 'server', 'replication')
  local id = string.match(info, 'run_id:(%w+)') or ''
  local replid = string.match(info, 'master_replid:(%w+)') or ''
  local replicas = 0
  for _ in string.gmatch(info, 'slave%d+:[^\r\n]*state=online') do replicas = replicas + 1 end
  return id .. ':' .. replid, replicas
end

-- The fleet's state, or nil when there is none. A state written before maxSplitSeconds existed
-- takes the caller's (`max_split_ms`), and keeps it from its next save on.
local function read_state(max_split_ms)
  local flat = redis.call('HGETALL', key)
  if #flat == 0 then return nil end
  local s = { leases = {}, gone = {}, charges = {}, dirty = {} }
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    local kind, rest = string.sub(field, 1, 2), string.sub(field, 3)
    if kind == 'n:' then
      local p = split(value)
      s.leases[rest] = { grant = tonumber(p[1]), written = tonumber(p[2]), want = tonumber(p[3]),
        b = tonumber(p[4]), seq = tonumber(p[5]), slot = tonumber(p[6]), since = tonumber(p[7]) }
    elseif kind == 't:' then
      local p = split(value)
      s.gone[rest] = { written = tonumber(p[1]), seq = tonumber(p[2]) }
    elseif kind == 'c:' then
      local p = split(value)
      s.charges[tonumber(rest)] = { pool = tonumber(p[1]), floor = tonumber(p[2]) or 0 }
    else
      s[field] = value
    end
  end
  s.version, s.held, s.cseq = tonumber(s.version), tonumber(s.held), tonumber(s.cseq)
  s.swept = tonumber(s.swept) or 0
  s.reserve, s.max_nodes, s.lease_ms = tonumber(s.reserve), tonumber(s.max_nodes), tonumber(s.lease_ms)
  s.max_split_ms = tonumber(s.max_split_ms) or max_split_ms
  return s
end

-- A fleet with no state: new, or its state was lost. Either way growth is held until every lease
-- granted before has lapsed and a valid refresh sent after that has settled the fleet.
-- The creating node's shape becomes the fleet's for as long as the state lives.
local function fresh_state(id, server_id, reserve, max_nodes, lease_ms, max_split_ms)
  return { leases = {}, gone = {}, charges = {}, dirty = {}, id = id, version = 0,
    epoch = id, held = 1, server = server_id, cseq = 0, swept = 0, reserve = reserve,
    max_nodes = max_nodes, lease_ms = lease_ms, max_split_ms = max_split_ms }
end

-- A loss this state can tell: a new epoch begins, held. Charges of the old epoch stay charged.
local function new_epoch(s, epoch, known_version)
  s.epoch, s.held = epoch, 1
  s.version = math.max(s.version, known_version)
end

-- Field writes, applied by `save` (the last one to a field wins; false deletes it).
local function put(s, field, value) s.dirty[field] = value end
local function drop(s, field) s.dirty[field] = false end

local function put_charge(s, n)
  put(s, 'c:' .. n, num(s.charges[n].pool) .. '|' .. num(s.charges[n].floor))
end

local function charge(s, pool, floor)
  if pool > 0 or floor > 0 then
    s.cseq = s.cseq + 1
    s.charges[s.cseq] = { pool = pool, floor = floor }
    put_charge(s, s.cseq)
  end
end

-- A node's static floor: its own b, the fleet's reserve and maxNodes.
local function floor_of(s, b)
  return b * s.reserve / s.max_nodes
end

-- Many charges waiting (a long outage with churn): the oldest are merged into the next one. A
-- merged charge settles with the later number: later, never sooner.
-- Keeps C: a merge moves units between charges, never drops any.
local MAX_CHARGES = 64
local function bound_charges(s)
  local numbers = {}
  for n, _ in pairs(s.charges) do numbers[#numbers + 1] = n end
  if #numbers <= MAX_CHARGES then return end
  table.sort(numbers)
  for i = 1, #numbers - MAX_CHARGES do
    local from, to = numbers[i], numbers[i + 1]
    s.charges[to].pool = s.charges[to].pool + s.charges[from].pool
    s.charges[to].floor = s.charges[to].floor + s.charges[from].floor
    s.charges[from] = nil
    drop(s, 'c:' .. from)
    put_charge(s, to)
  end
end

-- Remembers an ended lease (written with the version this call saves).
local function bury(s, node, seq)
  s.gone[node] = { written = s.version + 1, seq = seq }
  put(s, 't:' .. node, tostring(s.version + 1) .. '|' .. seq)
end

-- How long ago a node must have seen a state for its report to end leases: max_split_ms +
-- lease_ms × 1.03 + 2 s, the length of a hold (rules::fleet::growth_hold says the same). A lease
-- this copy holds may have been renewed on an old primary for up to max_split_ms after the
-- copy was promoted (a split brain), its deadline moved where this server never saw it; a node
-- that saw this epoch that long ago saw it after the promotion, so by then that deadline passed.
local function sweep_age_ms(s)
  return s.max_split_ms + s.lease_ms * 1.03 + 2000
end

-- A node saw this state at `version` (of this lineage and epoch) at least `age_ms` ago on its
-- own clock. Every lease written at or before that version, and not renewed since, was written
-- at least that long ago in real time (less 1 % for the reporter's clock rate): with a whole
-- lease and the longest split measured, its holder's deadline has certainly passed. Such a
-- lease ends. It is not returned to the pool: its whole grant (and its static floor, whose slot
-- another node may take now) may have been spent, so it stays charged until a valid refresh
-- sent after a node saw the charge settles it. Ended leases seen as long are forgotten.
-- Keeps T (docs/fleet-protocol.md, Invariants).
local function sweep(s, id, epoch, version, age_ms)
  if age_ms < sweep_age_ms(s) or id ~= s.id or epoch ~= s.epoch then return end
  s.swept = math.max(s.swept, version)
  for node, gone in pairs(s.gone) do
    if gone.written <= version then
      s.gone[node] = nil
      drop(s, 't:' .. node)
    end
  end
  -- In a fixed order, so that the charges' numbers never depend on the hash's order.
  local ended = {}
  for node, lease in pairs(s.leases) do
    if lease.written <= version then ended[#ended + 1] = node end
  end
  table.sort(ended)
  for _, node in ipairs(ended) do
    local lease = s.leases[node]
    -- A static floor may have been spent too, and its slot is free for another node now.
    charge(s, lease.grant, lease.slot * floor_of(s, lease.b))
    s.leases[node] = nil
    drop(s, 'n:' .. node)
    bury(s, node, lease.seq)
  end
end

-- The units charged, of the pool or of the floors.
local function charged(s, part)
  local total = 0
  for _, units in pairs(s.charges) do total = total + units[part] end
  return total
end

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function save(s, ttl_ms)
  s.version = s.version + 1
  for _, field in ipairs({ 'id', 'epoch', 'server' }) do put(s, field, s[field]) end
  for _, field in ipairs({ 'version', 'held', 'cseq', 'swept', 'max_nodes', 'lease_ms', 'max_split_ms' }) do
    put(s, field, tostring(s[field]))
  end
  put(s, 'reserve', num(s.reserve))
  local sets, dels = {}, {}
  for field, value in pairs(s.dirty) do
    if value then
      sets[#sets + 1] = field
      sets[#sets + 1] = value
    else
      dels[#dels + 1] = field
    end
  end
  if #dels > 0 then redis.call('HDEL', key, unpack(dels)) end
  redis.call('HSET', key, unpack(sets))
  -- An idle fleet's state vanishes, which its next call treats like a loss (safe). The TTL is
  -- refreshed every 8th write (the first included): one command less per call, and an idle
  -- fleet's TTL is many renewals long.
  if s.version % 8 == 1 then redis.call('PEXPIRE', key, ttl_ms) end
end

-- The reply every script ends with (numbers as strings: Lua would truncate them).
local function reply(s, replicas, loss, extra)
  local out = {
    s.id, tostring(s.version), s.epoch, tostring(s.held), tostring(count(s.leases)),
    tostring(s.max_nodes), num(s.reserve), tostring(s.lease_ms), num(charged(s, 'pool') + charged(s, 'floor')), tostring(s.cseq),
    tostring(replicas), loss and '1' or '0', tostring(s.max_split_ms),
  }
  for _, v in ipairs(extra) do out[#out + 1] = v end
  return out
end
