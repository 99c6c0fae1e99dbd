//! The built-in HTTP adapter (docs/http-adapter.md): `GET url` with the credential header, no
//! redirects, body read up to 64 KiB.

use reqwest::header::{HeaderName, HeaderValue, ACCEPT};
use reqwest::{Client, Url};

use super::answer::{verdict_of_body, verdict_of_status, MAX_BODY_BYTES};
use super::client::{client_builder, shared_client};
use super::failure::cause_of;
use crate::config::HttpAuthorityConfig;
use crate::rules::{RefreshCause, Verdict};
use crate::secret::Secret;

pub struct HttpAuthority {
    client: Client,
    url: Url,
    header: HeaderName,
    header_value: Secret<HeaderValue>,
    pointer: String,
    required: Vec<String>,
}

impl HttpAuthority {
    /// Shares the process-wide client unless `caPem` needs a client of its own.
    pub fn new(config: HttpAuthorityConfig) -> Result<Self, reqwest::Error> {
        let client = match &config.ca_pem {
            None => shared_client().clone(),
            Some(pem) => reqwest::Certificate::from_pem_bundle(pem.as_bytes())?
                .into_iter()
                .fold(client_builder(), |builder, cert| {
                    builder.add_root_certificate(cert)
                })
                .build()?,
        };
        Ok(HttpAuthority {
            client,
            url: config.url,
            header: config.header,
            header_value: config.header_value,
            pointer: config.capabilities_pointer,
            required: config.required_capabilities,
        })
    }

    /// Any transport failure (refused, reset, DNS, TLS) is `Indeterminate` with its cause;
    /// errors are dropped, never shown, because reqwest's messages can carry the URL.
    pub async fn check(&self) -> Verdict {
        let request = self
            .client
            .get(self.url.clone())
            .header(self.header.clone(), self.header_value.expose().clone())
            .header(ACCEPT, "application/json");
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(error) => return Verdict::Indeterminate(cause_of(&error)),
        };
        if let Some(verdict) = verdict_of_status(response.status().as_u16()) {
            return verdict;
        }
        let too_large = Verdict::Indeterminate(RefreshCause::BodyTooLarge);
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BODY_BYTES as u64)
        {
            return too_large;
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if body.len() + chunk.len() <= MAX_BODY_BYTES => {
                    body.extend_from_slice(&chunk)
                }
                Ok(Some(_)) => return too_large,
                Err(error) => return Verdict::Indeterminate(cause_of(&error)),
                Ok(None) => break,
            }
        }
        verdict_of_body(&body, &self.pointer, &self.required)
    }
}
