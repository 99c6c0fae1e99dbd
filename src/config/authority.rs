//! `authority` options → [`AuthorityConfig`]: the HTTP adapter's URL, credential, capabilities
//! and header, or an `inspect` function. No message ever echoes the credential, the URL, or what
//! was given as `credentialEnv`.

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Url;

use crate::options::catalog::INSPECT_AUTHORITY;
use crate::options::env::without_one_newline;
use crate::options::limits::{CAPABILITIES, CAPABILITY_BYTES, CREDENTIAL_BYTES, FORBIDDEN_HEADERS};
use crate::options::{check_length, error, is_env_name, ConfigError, RawValue, Section};
use crate::secret::Secret;

#[derive(Debug, Clone)]
pub enum AuthorityConfig {
    Http(Box<HttpAuthorityConfig>),
    /// `authority.inspect`: the binding keeps the function itself.
    Inspect,
}

#[derive(Debug, Clone)]
pub struct HttpAuthorityConfig {
    pub url: Url,
    pub header: HeaderName,
    /// `<scheme> <credential>`, marked sensitive.
    pub header_value: Secret<HeaderValue>,
    pub required_capabilities: Vec<String>,
    /// RFC 6901 JSON Pointer into the answer.
    pub capabilities_pointer: String,
    /// Extra trusted root certificates, PEM (already checked to parse).
    pub ca_pem: Option<String>,
}

pub(super) fn parse_authority(
    top: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<AuthorityConfig, ConfigError> {
    let Some(authority) = top.section("authority")? else {
        return Err(error(
            "authority",
            "is required: { url, credential, requiredCapability } or { inspect }",
        ));
    };
    if authority.has("inspect") {
        if let Some((key, _)) = authority
            .members()
            .iter()
            .find(|(k, v)| k != "inspect" && !matches!(v, RawValue::Undefined))
        {
            return Err(error(
                &authority.path_of(key),
                "cannot be combined with authority.inspect",
            ));
        }
        // `undefined` members of the HTTP adapter are refused too: they are not inspect's.
        Section::new("authority", top.get("authority"), &INSPECT_AUTHORITY)?.function("inspect")?;
        return Ok(AuthorityConfig::Inspect);
    }
    parse_http_authority(&authority, env).map(|http| AuthorityConfig::Http(Box::new(http)))
}

fn parse_http_authority(
    authority: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpAuthorityConfig, ConfigError> {
    let allow_insecure = authority.boolean_or_default("allowInsecureHttp")?;
    let url = parse_url(authority.string("url")?, allow_insecure)?;
    let credential = parse_credential(authority, env)?;
    let required_capabilities = parse_capabilities(authority)?;
    let capabilities_pointer = authority.string_or_default("capabilitiesPointer")?;
    check_json_pointer(capabilities_pointer)?;
    let header = parse_header_name(authority.string_or_default("header")?)?;
    let scheme = authority.string_or_default("scheme")?;
    if !scheme.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(error(
            "authority.scheme",
            "must be visible ASCII characters (no whitespace, control characters or non-ASCII)",
        ));
    }
    let value = if scheme.is_empty() {
        credential.expose().clone()
    } else {
        format!("{scheme} {}", credential.expose())
    };
    // Both parts are visible ASCII (checked above and in `parse_credential`), so this cannot
    // fail; the error is kept for safety and never shows the value.
    let mut header_value = HeaderValue::from_str(&value).map_err(|_| {
        error(
            "authority.credential",
            "must be visible ASCII characters to fit in an HTTP header",
        )
    })?;
    header_value.set_sensitive(true);
    let ca_pem = authority.string("caPem")?.map(str::to_owned);
    if let Some(pem) = &ca_pem {
        check_ca_pem(pem)?;
    }
    Ok(HttpAuthorityConfig {
        url,
        header,
        header_value: Secret::new(header_value),
        required_capabilities,
        capabilities_pointer: capabilities_pointer.to_owned(),
        ca_pem,
    })
}

/// A token (RFC 9110) that is not a connection-level, framing or adapter-owned header.
fn parse_header_name(name: &str) -> Result<HeaderName, ConfigError> {
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        error(
            "authority.header",
            "must be a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
        )
    })?;
    if FORBIDDEN_HEADERS.contains(&header.as_str()) {
        return Err(error(
            "authority.header",
            format!(
                "must not be {}: connection, framing and adapter-owned headers \
                 ({}) cannot carry the credential",
                header.as_str(),
                FORBIDDEN_HEADERS.join(", ")
            ),
        ));
    }
    Ok(header)
}

fn parse_url(url: Option<&str>, allow_insecure: bool) -> Result<Url, ConfigError> {
    let url =
        url.ok_or_else(|| error("authority.url", "is required (or give authority.inspect)"))?;
    // Never echo the URL: it may carry a key in its query string.
    let parsed = Url::parse(url)
        .map_err(|e| error("authority.url", format!("must be an absolute URL ({e})")))?;
    // A user or password in the URL would go out as a second authorization header, ahead of
    // the credential's.
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(error(
            "authority.url",
            "must not contain a user name or password (user:password@); give the credential \
             as authority.credential or authority.credentialEnv",
        ));
    }
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if allow_insecure => Ok(parsed),
        "http" => Err(error(
            "authority.url",
            "must use https (plain http only with authority.allowInsecureHttp: true)",
        )),
        other => Err(error(
            "authority.url",
            format!("must use https, not {other}:"),
        )),
    }
}

fn parse_credential(
    authority: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Secret<String>, ConfigError> {
    authority.exclusive("credential", "credentialEnv")?;
    if let Some(credential) = authority.string("credential")? {
        return check_credential("authority.credential", credential);
    }
    let Some(name) = authority.string("credentialEnv")? else {
        return Err(error(
            "authority.credential",
            "is required (give authority.credential or authority.credentialEnv)",
        ));
    };
    // The name is never echoed: a credential passed here by mistake
    // (`credentialEnv: process.env.KEY`) would otherwise be printed.
    if !is_env_name(name) {
        return Err(error(
            "authority.credentialEnv",
            "must be the name of an environment variable (letters, digits and _, not starting \
             with a digit), not its value",
        ));
    }
    match env(name).as_deref().map(without_one_newline) {
        Some(value) if !value.is_empty() => {
            check_length("authority.credentialEnv", value, CREDENTIAL_BYTES)?;
            check_credential("authority.credentialEnv", value)
        }
        Some(_) => Err(error(
            "authority.credentialEnv",
            "the environment variable it names is empty",
        )),
        None => Err(error(
            "authority.credentialEnv",
            "the environment variable it names is not set",
        )),
    }
}

/// A credential is sent as a header value: non-empty visible ASCII (`!` to `~`).
fn check_credential(path: &str, credential: &str) -> Result<Secret<String>, ConfigError> {
    if credential.is_empty() {
        return Err(error(path, "must not be empty"));
    }
    if !credential.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(error(
            path,
            "must be visible ASCII characters (! to ~: no spaces, line breaks, control \
             characters or non-ASCII letters) to fit in an HTTP header",
        ));
    }
    Ok(Secret::new(credential.to_owned()))
}

fn parse_capabilities(authority: &Section<'_>) -> Result<Vec<String>, ConfigError> {
    authority.exclusive("requiredCapability", "requiredCapabilities")?;
    let check = |path: &str, name: &str| -> Result<String, ConfigError> {
        check_length(path, name, CAPABILITY_BYTES)?;
        if name.is_empty() {
            Err(error(path, "must not be an empty string"))
        } else {
            Ok(name.to_owned())
        }
    };
    if let Some(name) = authority.string("requiredCapability")? {
        return Ok(vec![check("authority.requiredCapability", name)?]);
    }
    match authority.get("requiredCapabilities") {
        RawValue::Undefined => Err(error(
            "authority.requiredCapability",
            "is required (give authority.requiredCapability or authority.requiredCapabilities)",
        )),
        RawValue::Array(items) if items.is_empty() => Err(error(
            "authority.requiredCapabilities",
            "must list at least one capability",
        )),
        RawValue::Array(items) if items.len() > CAPABILITIES => Err(error(
            "authority.requiredCapabilities",
            format!(
                "must list at most {} capabilities (got {})",
                CAPABILITIES,
                items.len()
            ),
        )),
        RawValue::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                RawValue::String(name) => {
                    check(&format!("authority.requiredCapabilities[{i}]"), name)
                }
                other => Err(error(
                    &format!("authority.requiredCapabilities[{i}]"),
                    format!("must be a string (got {})", other.type_name()),
                )),
            })
            .collect(),
        other => Err(error(
            "authority.requiredCapabilities",
            format!("must be an array of strings (got {})", other.type_name()),
        )),
    }
}

/// RFC 6901: empty, or `/`-separated tokens in which `~` is only followed by `0` or `1`.
fn check_json_pointer(pointer: &str) -> Result<(), ConfigError> {
    let bad_escape = pointer
        .split('~')
        .skip(1)
        .any(|rest| !rest.starts_with(['0', '1']));
    if (!pointer.is_empty() && !pointer.starts_with('/')) || bad_escape {
        return Err(error(
            "authority.capabilitiesPointer",
            "must be a JSON Pointer (RFC 6901): empty or starting with '/', with '~' only as ~0 or ~1",
        ));
    }
    Ok(())
}

fn check_ca_pem(pem: &str) -> Result<(), ConfigError> {
    match reqwest::Certificate::from_pem_bundle(pem.as_bytes()) {
        Ok(certs) if !certs.is_empty() => Ok(()),
        _ => Err(error(
            "authority.caPem",
            "must hold at least one PEM certificate (-----BEGIN CERTIFICATE-----)",
        )),
    }
}
