-- Shared by the fleet scripts. KEYS[1] holds a fleet's whole state, one hash, so that eviction,
-- DEL or FLUSHDB lose all of it or none of it:
--   meta fields  id, version, epoch, held, server, clock, cseq, reserve, max_nodes
--   n:<node>     a live lease: "grant|expires|want|b|seq"
--   t:<node>     a released node, kept a lease long so a late renewal cannot revive it: "expires|seq"
--   c:<number>   units charged (an expired lease's grant, a release's used part), numbered
-- The invariant every script keeps: live grants + charged units <= the pool lent.
--
-- Time: `clock` (ms) is the fleet's own clock. It only moves when a node reports how much time
-- its monotonic clock saw pass since its last answer (a lower bound), never by Redis's TIME, so
-- no step of the server's clock can expire a lease early. Charges settle by number, not time.

local key = KEYS[1]

local function num(x) return string.format('%.17g', x) end

local function split(s)
  local out = {}
  for part in string.gmatch(s, '[^|]+') do out[#out + 1] = part end
  return out
end

-- The server we run on: a failover or a restart changes it, and the state it holds may then be
-- older than what the nodes were told. Also the replicas connected now, for WAIT.
local function server()
  local id = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') or ''
  local replication = redis.call('INFO', 'replication')
  local replid = string.match(replication, 'master_replid:(%w+)') or ''
  local replicas = tonumber(string.match(replication, 'connected_slaves:(%d+)') or '0')
  return id .. ':' .. replid, replicas
end

local function read_state()
  local flat = redis.call('HGETALL', key)
  if #flat == 0 then return nil end
  local s = { leases = {}, gone = {}, charges = {}, dirty = {} }
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    local kind, rest = string.sub(field, 1, 2), string.sub(field, 3)
    if kind == 'n:' then
      local p = split(value)
      s.leases[rest] = { grant = tonumber(p[1]), expires = tonumber(p[2]), want = tonumber(p[3]),
        b = tonumber(p[4]), seq = tonumber(p[5]) }
    elseif kind == 't:' then
      local p = split(value)
      s.gone[rest] = { expires = tonumber(p[1]), seq = tonumber(p[2]) }
    elseif kind == 'c:' then
      s.charges[tonumber(rest)] = tonumber(value)
    else
      s[field] = value
    end
  end
  s.version, s.held, s.clock = tonumber(s.version), tonumber(s.held), tonumber(s.clock)
  s.cseq, s.reserve, s.max_nodes = tonumber(s.cseq), tonumber(s.reserve), tonumber(s.max_nodes)
  return s
end

-- A fleet with no state: new, or its state was lost. Either way growth is held until every lease
-- granted before has lapsed and a valid refresh sent after that has settled the fleet.
local function fresh_state(id, server_id, reserve, max_nodes)
  return { leases = {}, gone = {}, charges = {}, dirty = {}, id = id, version = 0,
    epoch = id, held = 1, server = server_id, clock = 0, cseq = 0, reserve = reserve,
    max_nodes = max_nodes }
end

-- A loss this state can tell: a new epoch begins, held. Charges of the old epoch stay charged.
local function new_epoch(s, epoch, known_version)
  s.epoch, s.held = epoch, 1
  s.version = math.max(s.version, known_version)
end

-- Field writes, applied by `save` (the last one to a field wins; false deletes it).
local function put(s, field, value) s.dirty[field] = value end
local function drop(s, field) s.dirty[field] = false end

local function charge(s, units)
  if units > 0 then
    s.cseq = s.cseq + 1
    s.charges[s.cseq] = units
    put(s, 'c:' .. s.cseq, num(units))
  end
end

-- Many charges waiting (a long outage with churn): the oldest are merged into the next one. A
-- merged charge settles with the later number: later, never sooner.
local MAX_CHARGES = 64
local function bound_charges(s)
  local numbers = {}
  for n, _ in pairs(s.charges) do numbers[#numbers + 1] = n end
  if #numbers <= MAX_CHARGES then return end
  table.sort(numbers)
  for i = 1, #numbers - MAX_CHARGES do
    local from, to = numbers[i], numbers[i + 1]
    s.charges[to] = s.charges[to] + s.charges[from]
    s.charges[from] = nil
    drop(s, 'c:' .. from)
    put(s, 'c:' .. to, num(s.charges[to]))
  end
end

-- A node's report of the time that passed moves the fleet clock, within the lineage it knows.
local function advance(s, known_id, clock_to)
  if known_id == s.id and clock_to > s.clock then s.clock = clock_to end
end

-- An expired lease is not returned to the pool: its whole grant may have been spent, so it stays
-- charged until a valid refresh sent after a node saw the charge settles it.
local function sweep(s)
  for node, lease in pairs(s.leases) do
    if lease.expires <= s.clock then
      charge(s, lease.grant)
      s.leases[node] = nil
      drop(s, 'n:' .. node)
    end
  end
  for node, gone in pairs(s.gone) do
    if gone.expires <= s.clock then
      s.gone[node] = nil
      drop(s, 't:' .. node)
    end
  end
end

local function charged(s)
  local total = 0
  for _, units in pairs(s.charges) do total = total + units end
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
  for _, field in ipairs({ 'version', 'held', 'cseq', 'max_nodes' }) do put(s, field, tostring(s[field])) end
  put(s, 'clock', num(s.clock))
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
  -- An idle fleet's state vanishes, which its next call treats like a loss (safe).
  redis.call('PEXPIRE', key, ttl_ms)
end

-- The reply every script ends with (numbers as strings: Lua would truncate them).
local function reply(s, replicas, loss, extra)
  local out = {
    s.id, tostring(s.version), s.epoch, tostring(s.held), num(s.clock), tostring(count(s.leases)),
    tostring(s.max_nodes), num(charged(s)), tostring(s.cseq), tostring(replicas), loss and '1' or '0',
  }
  for _, v in ipairs(extra) do out[#out + 1] = v end
  return out
end
