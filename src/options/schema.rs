//! The shape of the option schema: what one option and one options object say about themselves.
//! The data is in [`super::catalog`]; the parser ([`super::Section`]), the typings and the option
//! tables of docs/ all read it.

/// One options object: `budget`, `budget.fleet`, the options of `new CircuitBreaker`, ...
#[derive(Debug)]
pub struct Group {
    /// Where the object sits, as error messages spell it: `""` for a top-level options object.
    pub path: &'static str,
    /// Its TypeScript interface, e.g. `BudgetOptions`.
    pub interface: &'static str,
    /// Type parameters of the interface (`<F = never>`), or `""`.
    pub type_params: &'static str,
    /// The interface's JSDoc.
    pub doc: &'static str,
    /// Options that another group has too, listed first (the breaker's state-machine options
    /// are both `refresh.breaker` and `new CircuitBreaker` options).
    pub shared: &'static [Opt],
    pub options: &'static [Opt],
    /// `Closed`: any other key is refused, so a typo cannot fall back to a default.
    pub keys: Keys,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    Closed,
    /// Other members are allowed and these are read by the binding, not by the parser (a pino
    /// logger has many more methods than the three the sentinel calls).
    Open,
}

/// One option.
#[derive(Debug)]
pub struct Opt {
    pub key: &'static str,
    pub kind: Kind,
    pub default: Default,
    /// What the option is for (JSDoc and the docs' tables' "what it is"). Markdown.
    pub doc: &'static str,
    /// What a valid value is, beyond what [`Kind`] says (the docs' tables' "rule" and JSDoc). Markdown;
    /// cross-field rules are checked by code, but described here.
    pub rule: &'static str,
    /// Values the parser's code refuses (its message says why); the rule lists them.
    pub none_of: &'static [&'static str],
}

/// The value's type, with the checks simple enough for the parser to apply from here.
#[derive(Debug)]
pub enum Kind {
    /// Any number when `None` (the rules module checks it with the other fields); otherwise
    /// the parser refuses any number outside the range.
    Number(Option<Range>),
    /// A string of at most `max_bytes` (the message gives the length, never the value).
    String {
        max_bytes: usize,
    },
    /// One of the names (a string).
    Choice(&'static [&'static str]),
    Boolean,
    /// A function with this TypeScript signature.
    Function(&'static str),
    /// An array of at most `max_items` strings of at most `item_bytes` each.
    StringList {
        max_items: usize,
        item_bytes: usize,
    },
    /// A nested options object.
    Object(&'static Group),
    /// `true` (every default), `false` (off), or a nested options object.
    SwitchOrObject(&'static Group),
    /// One of several options objects (the keys of all of them are known).
    OneOf(&'static [&'static Group]),
}

/// A numeric range, and how an error states it: `must be {must} (got …)`.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub min: f64,
    /// `min` itself is refused.
    pub min_open: bool,
    pub max: f64,
    /// `max` itself is refused.
    pub max_open: bool,
    pub whole: bool,
    /// The phrase after "must be", e.g. "a whole number from 1 to 10000".
    pub must: &'static str,
}

impl Range {
    pub fn contains(&self, value: f64) -> bool {
        let above_min = if self.min_open {
            value > self.min
        } else {
            value >= self.min
        };
        let below_max = if self.max_open {
            value < self.max
        } else {
            value <= self.max
        };
        // NaN fails every comparison; infinities fail `is_finite`.
        value.is_finite() && above_min && below_max && (!self.whole || value.fract() == 0.0)
    }
}

/// What an absent option means.
#[derive(Debug, Clone, Copy)]
pub enum Default {
    Required,
    /// The parser uses these values.
    Number(f64),
    Str(&'static str),
    Bool(bool),
    /// Computed or described by code (`300 · w`, `none`): documentation only.
    Text(&'static str),
}

impl Group {
    /// Every option, the shared ones first.
    pub fn all(&self) -> impl Iterator<Item = &'static Opt> + Clone {
        let (shared, options): (&'static [Opt], &'static [Opt]) = (self.shared, self.options);
        shared.iter().chain(options)
    }

    pub fn option(&self, key: &str) -> Option<&'static Opt> {
        self.all().find(|opt| opt.key == key)
    }

    /// The option's path, as error messages spell it.
    pub fn path_of(&self, opt: &Opt) -> String {
        join(self.path, opt.key)
    }
}

impl Opt {
    pub fn required(&self) -> bool {
        matches!(self.default, Default::Required)
    }

    /// The groups nested under this option, if any.
    pub fn nested(&'static self) -> &'static [&'static Group] {
        match &self.kind {
            Kind::Object(group) | Kind::SwitchOrObject(group) => std::slice::from_ref(group),
            Kind::OneOf(groups) => groups,
            _ => &[],
        }
    }
}

/// `path.key`, or `key` at the top level.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}
