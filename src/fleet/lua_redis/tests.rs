//! The stand-in on its own: the script environment, the commands, expiry and the knobs. What real
//! Redis does is checked in `cross_check.rs`; these pin the cases a trace rarely reaches.

use super::{format_g17, LuaRedis, Reply};

const KEY: &str = "{fleet}";

fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Runs a one-line script on KEY with `argv`.
fn run(redis: &mut LuaRedis, script: &str, argv: &[&str]) -> Result<Vec<String>, String> {
    redis.eval(script, &[KEY], &args(argv))
}

fn ok(redis: &mut LuaRedis, script: &str, argv: &[&str]) -> Vec<String> {
    run(redis, script, argv).unwrap_or_else(|e| panic!("{script}: {e}"))
}

fn err(redis: &mut LuaRedis, script: &str) -> String {
    run(redis, script, &[]).expect_err(script)
}

#[test]
fn scripts_see_keys_and_argv_of_their_own_call_only() {
    let mut redis = LuaRedis::new();
    let script = "return {KEYS[1], #KEYS, #ARGV, ARGV[1] or 'none'}";
    assert_eq!(
        redis.eval(script, &["a", "b"], &args(&["x", "y"])).unwrap(),
        ["a", "2", "2", "x"]
    );
    assert_eq!(
        redis.eval(script, &["c"], &[]).unwrap(),
        ["c", "1", "0", "none"]
    );
}

#[test]
fn script_results_convert_as_redis_replies_them() {
    let mut redis = LuaRedis::new();
    let mut reply = |script: &str| redis.eval_reply(script, &[], &[]);
    use Reply::{Array, Bulk, Error, Int, Nil, Status};
    // Numbers truncate toward zero; true is 1; false is nil; an array ends at its first nil.
    assert_eq!(
        reply("return {1, 2.9, -2.9, 'x', true, false, 'y', nil, 'z'}"),
        Array(vec![
            Int(1),
            Int(2),
            Int(-2),
            Bulk("x".into()),
            Int(1),
            Nil,
            Bulk("y".into())
        ])
    );
    assert_eq!(reply("return {err = 'boom'}"), Error("boom".into()));
    assert_eq!(reply("return {ok = 'fine'}"), Status("fine".into()));
    assert_eq!(reply("return 7.9"), Int(7));
    assert_eq!(reply("return false"), Nil);
    assert_eq!(reply("return nil"), Nil);
    assert_eq!(
        reply("return {{1}, 'a'}"),
        Array(vec![Array(vec![Int(1)]), Bulk("a".into())])
    );
}

#[test]
fn eval_answers_an_array_as_strings_and_anything_else_as_an_error() {
    let mut redis = LuaRedis::new();
    assert_eq!(
        ok(&mut redis, "return {false, 5, 'x', {ok = 'fine'}}", &[]),
        ["", "5", "x", "fine"]
    );
    assert_eq!(err(&mut redis, "return {err = 'ERR no'}"), "ERR no");
    assert!(err(&mut redis, "return 'a string'").contains("not an array"));
    assert!(err(&mut redis, "return {{1}}").contains("nested array"));
    assert_eq!(
        err(&mut redis, "return {'a', {err = 'ERR inner'}}"),
        "ERR inner"
    );
}

#[test]
fn command_replies_reach_scripts_as_redis_converts_them() {
    let mut redis = LuaRedis::new();
    let script = "local added = redis.call('HSET', KEYS[1], 'a', '1', 'b', '2')
        local missing = redis.call('HGET', KEYS[1], 'c')
        local failed = redis.pcall('HSET', KEYS[1], 'c', '3', 'odd')
        return {type(added), added, type(missing), tostring(missing), failed.err}";
    assert_eq!(
        ok(&mut redis, script, &[]),
        [
            "number",
            "2",
            "boolean",
            "false",
            "ERR wrong number of arguments for 'hset' command"
        ]
    );
}

#[test]
fn hashes_keep_insertion_order_and_vanish_when_empty() {
    let mut redis = LuaRedis::new();
    let hset = "return {redis.call('HSET', KEYS[1], unpack(ARGV))}";
    assert_eq!(ok(&mut redis, hset, &["b", "1", "a", "2"]), ["2"]);
    assert_eq!(ok(&mut redis, hset, &["b", "3", "c", "4"]), ["1"]);
    let hgetall = "return redis.call('HGETALL', KEYS[1])";
    assert_eq!(ok(&mut redis, hgetall, &[]), ["b", "3", "a", "2", "c", "4"]);
    let hdel = "return {redis.call('HDEL', KEYS[1], unpack(ARGV)), redis.call('EXISTS', KEYS[1])}";
    assert_eq!(ok(&mut redis, hdel, &["a", "x"]), ["1", "1"]);
    assert_eq!(
        ok(&mut redis, "return {redis.call('HGET', KEYS[1], 'c')}", &[]),
        ["4"]
    );
    assert_eq!(ok(&mut redis, hdel, &["b", "c"]), ["2", "0"]);
    assert_eq!(ok(&mut redis, hgetall, &[]), Vec::<String>::new());
    assert_eq!(ok(&mut redis, hdel, &["b"]), ["0", "0"]);
}

#[test]
fn command_errors_raise_in_call_and_return_in_pcall() {
    let mut redis = LuaRedis::new();
    let refused = [
        (
            "redis.call('NOPE', 'x')",
            "Unknown Redis command called from script",
        ),
        (
            "redis.call('hgetall')",
            "Wrong number of args calling Redis command from script",
        ),
        (
            "redis.call('HGET', {}, 'x')",
            "Lua redis lib command arguments must be strings or integers",
        ),
        (
            "redis.call()",
            "Please specify at least one argument for this redis lib call",
        ),
    ];
    for (script, message) in refused {
        assert_eq!(
            err(&mut redis, script),
            format!("ERR {message}"),
            "{script}"
        );
    }
    // redis.pcall answers the error table; Lua's pcall around redis.call, its text (Redis's pcall).
    let caught = "local a = redis.pcall('NOPE')
        local ok, b = pcall(redis.call, 'NOPE')
        return {a.err, tostring(ok), b}";
    let unknown = "ERR Unknown Redis command called from script";
    assert_eq!(ok(&mut redis, caught, &[]), [unknown, "false", unknown]);
}

#[test]
fn lua_errors_are_errors_with_their_line() {
    let mut redis = LuaRedis::new();
    let runtime = err(&mut redis, "local x = nil\nreturn x + 1");
    assert!(
        runtime.starts_with("ERR user_script:2: attempt to perform arithmetic"),
        "{runtime}"
    );
    let compile = err(&mut redis, "return {");
    assert!(
        compile.starts_with("ERR Error compiling script (new function): user_script:1:"),
        "{compile}"
    );
    assert!(err(&mut redis, "error('mine')").ends_with("user_script:1: mine"));
}

#[test]
fn globals_are_protected_and_only_redis_libraries_load() {
    let mut redis = LuaRedis::new();
    assert!(err(&mut redis, "leak = 1").contains("Attempt to modify a readonly table"));
    assert!(err(&mut redis, "KEYS = {}").contains("Attempt to modify a readonly table"));
    assert!(err(&mut redis, "_G.leak = 1").contains("Attempt to modify a readonly table"));
    let missing = err(&mut redis, "return {tostring(nothing_here)}");
    assert!(
        missing.contains("Script attempted to access nonexistent global variable 'nothing_here'")
    );
    assert!(err(&mut redis, "return {os.time()}").contains("nonexistent global variable 'os'"));
    let libraries = "return {type(string.format), type(math.max), type(table.sort), type(unpack)}";
    assert_eq!(ok(&mut redis, libraries, &[]), ["function"; 4]);
}

#[test]
fn numbers_pass_to_commands_as_17_significant_digits() {
    let mut redis = LuaRedis::new();
    let script = "redis.call('HSET', KEYS[1], 'a', 0.1, 'b', 3600000, 'c', 1e20, 'd', -2.5)
        return redis.call('HGETALL', KEYS[1])";
    assert_eq!(
        ok(&mut redis, script, &[]),
        [
            "a",
            "0.10000000000000001",
            "b",
            "3600000",
            "c",
            "1e+20",
            "d",
            "-2.5"
        ]
    );
}

#[test]
fn format_g17_is_printf_g17() {
    let mut redis = LuaRedis::new();
    let values = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        1.0 / 3.0,
        123.456,
        1e-4,
        1.5e-5,
        1e16,
        1e17,
        12_345_678_901_234_568.0,
        99_999_999_999_999_980.0,
        2.0_f64.powi(60),
        1e300,
        -1e-300,
        5e-324,
        f64::MAX,
        3_600_000.0,
    ];
    for x in values {
        let lua = ok(
            &mut redis,
            "return {string.format('%.17g', tonumber(ARGV[1]))}",
            &[&format!("{x:e}")],
        );
        assert_eq!(format_g17(x), lua[0], "{x:e}");
    }
    assert_eq!(
        [
            format_g17(f64::INFINITY),
            format_g17(f64::NEG_INFINITY),
            format_g17(f64::NAN)
        ],
        ["inf", "-inf", "nan"]
    );
}

/// Sets a field of KEY and its expiry in ARGV[1] ms.
const SET_EXPIRING: &str = "redis.call('HSET', KEYS[1], 'f', 'v')
    return {redis.call('PEXPIRE', KEYS[1], ARGV[1])}";
const SET: &str = "return {redis.call('HSET', KEYS[1], 'f', 'v')}";
const PTTL_EXISTS: &str = "return {redis.call('PTTL', KEYS[1]), redis.call('EXISTS', KEYS[1])}";

#[test]
fn keys_expire_after_their_millisecond_as_in_redis() {
    let mut redis = LuaRedis::new();
    let (set, pttl) = (SET_EXPIRING, PTTL_EXISTS);
    assert_eq!(ok(&mut redis, set, &["100"]), ["1"]);
    assert_eq!(ok(&mut redis, pttl, &[]), ["100", "1"]);
    redis.advance_server_clock(100);
    // Redis expires a key when now > expiry: it lives through its last millisecond.
    assert_eq!(ok(&mut redis, pttl, &[]), ["0", "1"]);
    redis.advance_server_clock(1);
    assert_eq!(ok(&mut redis, pttl, &[]), ["-2", "0"]);
    // A time not in the future deletes at once; no key: 0.
    assert_eq!(ok(&mut redis, set, &["0"]), ["1"]);
    assert_eq!(ok(&mut redis, pttl, &[]), ["-2", "0"]);
    assert_eq!(
        ok(
            &mut redis,
            "return {redis.call('PEXPIRE', KEYS[1], 5)}",
            &[]
        ),
        ["0"]
    );
    ok(&mut redis, SET, &[]);
    assert_eq!(ok(&mut redis, pttl, &[]), ["-1", "1"]);
}

#[test]
fn pexpire_takes_only_redis_integers() {
    let mut redis = LuaRedis::new();
    ok(&mut redis, SET, &[]);
    let pexpire = "return {redis.call('PEXPIRE', KEYS[1], unpack(ARGV))}";
    for bad in ["1.5", "+5", "007", " 5", "-0", ""] {
        let message = run(&mut redis, pexpire, &[bad]).expect_err(bad);
        assert_eq!(
            message, "ERR value is not an integer or out of range",
            "{bad:?}"
        );
    }
    let overflow = run(&mut redis, pexpire, &["9223372036854775807"]).unwrap_err();
    assert_eq!(overflow, "ERR invalid expire time in 'pexpire' command");
    let option = run(&mut redis, pexpire, &["5", "NX"]).unwrap_err();
    assert_eq!(option, "ERR Unsupported option NX");
    assert_eq!(ok(&mut redis, pexpire, &["-1"]), ["1"]);
    assert_eq!(
        ok(&mut redis, "return {redis.call('EXISTS', KEYS[1])}", &[]),
        ["0"]
    );
}

#[test]
fn a_clock_step_back_postpones_expiry_but_revives_nothing() {
    let mut redis = LuaRedis::new();
    ok(&mut redis, SET_EXPIRING, &["100"]);
    redis.advance_server_clock(50);
    redis.advance_server_clock(-1000);
    assert_eq!(ok(&mut redis, PTTL_EXISTS, &[]), ["1050", "1"]);
    redis.advance_server_clock(1101);
    redis.advance_server_clock(-1000);
    assert_eq!(ok(&mut redis, PTTL_EXISTS, &[]), ["-2", "0"]);
}

#[test]
fn time_and_the_server_clock_agree() {
    let mut redis = LuaRedis::new();
    let start = redis.server_clock_ms();
    assert_eq!(start % 1000, 0, "starts on a whole second");
    redis.advance_server_clock(1234);
    assert_eq!(redis.server_clock_ms(), start + 1234);
    let seconds = (start / 1000 + 1).to_string();
    assert_eq!(
        ok(&mut redis, "return redis.call('TIME')", &[]),
        [seconds.as_str(), "234000"]
    );
}

#[test]
fn del_dump_and_restore_copy_values_with_their_expiry() {
    let mut redis = LuaRedis::new();
    let set = "return {redis.call('HSET', KEYS[1], unpack(ARGV))}";
    ok(&mut redis, set, &["a", "1"]);
    let before = redis.dump(KEY).expect("the key exists");
    ok(&mut redis, set, &["b", "2"]);
    redis.restore(KEY, before.clone());
    assert_eq!(
        redis.hash(KEY).into_iter().collect::<Vec<_>>(),
        [("a".into(), "1".into())]
    );
    assert!(redis.del(KEY));
    assert!(!redis.del(KEY));
    assert_eq!(redis.dump(KEY), None);
    assert!(redis.hash(KEY).is_empty());

    ok(
        &mut redis,
        "redis.call('HSET', KEYS[1], 'a', '1') return {redis.call('PEXPIRE', KEYS[1], 10)}",
        &[],
    );
    let expiring = redis.dump(KEY).expect("the key exists");
    redis.advance_server_clock(11);
    assert_eq!(redis.dump(KEY), None);
    // The expiry is absolute: restored after it, the copy is gone too.
    redis.restore(KEY, expiring);
    assert_eq!(redis.dump(KEY), None);
    redis.restore(KEY, before);
    assert_eq!(
        ok(&mut redis, "return {redis.call('PTTL', KEYS[1])}", &[]),
        ["-1"]
    );
}

fn info(redis: &mut LuaRedis, sections: &[&str]) -> String {
    let reply = redis.eval_reply(
        "return redis.call('INFO', unpack(ARGV))",
        &[],
        &args(sections),
    );
    let Reply::Bulk(text) = reply else {
        panic!("INFO answered {reply:?}")
    };
    text
}

#[test]
fn info_shows_the_identity_and_replicas_set() {
    let mut redis = LuaRedis::new();
    let (run_id, replid) = ("a".repeat(40), "b".repeat(40));
    redis.set_server(&run_id, &replid);
    assert_eq!(redis.server_identity(), (run_id.clone(), replid.clone()));
    let server = info(&mut redis, &["server"]);
    assert!(
        server.starts_with("# Server\r\nredis_version:7.0.15\r\n"),
        "{server}"
    );
    assert!(server.contains(&format!("\r\nrun_id:{run_id}\r\n")) && server.ends_with("\r\n"));
    assert!(!server.contains("# Replication"));

    redis.set_replicas(2, 1);
    let replication = info(&mut redis, &["REPLICATION"]);
    assert!(replication.starts_with("# Replication\r\nrole:master\r\nconnected_slaves:3\r\n"));
    assert!(replication.contains("\r\nslave1:ip=127.0.0.1,port=6381,state=online,"));
    assert!(replication
        .contains("\r\nslave2:ip=127.0.0.1,port=6382,state=wait_bgsave,offset=0,lag=0\r\n"));
    assert!(replication.contains(&format!("\r\nmaster_replid:{replid}\r\n")));

    // Several sections: Redis's order, one empty line between; unknown ones are left out.
    let both = info(&mut redis, &["replication", "server", "nonsense"]);
    assert_eq!(both, format!("{server}\r\n{replication}"));
    assert_eq!(info(&mut redis, &[]), both);
    assert_eq!(info(&mut redis, &["nonsense"]), "");
}

#[test]
fn server_identities_are_drawn_from_their_seed() {
    let mut redis = LuaRedis::new();
    redis.new_server_identity(7);
    let first = redis.server_identity();
    redis.new_server_identity(8);
    assert_ne!(redis.server_identity(), first);
    redis.new_server_identity(7);
    assert_eq!(redis.server_identity(), first);
    let hex40 = |s: &str| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    assert!(
        hex40(&first.0) && hex40(&first.1) && first.0 != first.1,
        "{first:?}"
    );
}

#[test]
fn commands_count_as_info_commandstats_counts_them() {
    let mut redis = LuaRedis::new();
    let script = "redis.call('HSET', KEYS[1], 'a', '1')
        redis.pcall('hset', KEYS[1], 'a', '1', 'odd')
        redis.pcall('NOPE')
        redis.pcall('HGETALL')
        return redis.call('hgetall', KEYS[1])";
    ok(&mut redis, script, &[]);
    ok(&mut redis, script, &[]);
    let counts = |redis: &LuaRedis| redis.command_counts().into_iter().collect::<Vec<_>>();
    // A command that answered an error counts; an unknown one or a wrong arity does not.
    assert_eq!(
        counts(&redis),
        [
            ("evalsha".into(), 2),
            ("hgetall".into(), 2),
            ("hset".into(), 4)
        ]
    );
    redis.reset_command_counts();
    assert_eq!(counts(&redis), []);
    err(&mut redis, "return {");
    assert_eq!(counts(&redis), [("evalsha".into(), 1)]);
}

#[test]
fn hgetall_can_shuffle_to_catch_order_dependence() {
    let mut redis = LuaRedis::new();
    let fields: Vec<String> = (0..20)
        .flat_map(|i| [format!("f{i}"), i.to_string()])
        .collect();
    redis
        .eval(
            "return {redis.call('HSET', KEYS[1], unpack(ARGV))}",
            &[KEY],
            &fields,
        )
        .unwrap();
    let hgetall = |redis: &mut LuaRedis| ok(redis, "return redis.call('HGETALL', KEYS[1])", &[]);
    assert_eq!(hgetall(&mut redis), fields);
    redis.set_hgetall_shuffle(Some(1));
    let shuffled = hgetall(&mut redis);
    assert_ne!(shuffled, fields);
    let pairs = |flat: &[String]| {
        flat.chunks(2)
            .map(<[String]>::to_vec)
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(pairs(&shuffled), pairs(&fields));
    assert_ne!(hgetall(&mut redis), shuffled, "each call draws anew");
    redis.set_hgetall_shuffle(None);
    assert_eq!(hgetall(&mut redis), fields);
}
