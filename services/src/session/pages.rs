//! Scripts in web pages: a window showing a browser's page evaluates
//! JavaScript there, through whatever the host reaches that browser by.

use std::time::Duration;

use serde_json::Value;
use wayrig_host::WindowHandle;

use super::Session;
use crate::model::Error;

/// How long a script may run, its promises included, before the answer is a timeout.
const SCRIPT_LIMIT: Duration = Duration::from_secs(30);
/// The longest script taken: a page's whole test library fits.
const SCRIPT_SIZE_LIMIT: usize = 4 << 20;

impl Session {
    /// Evaluate `script` in the page `window` shows: an expression's value,
    /// promises awaited, or what its statements return, as JSON.
    pub async fn evaluate(&self, window: WindowHandle, script: &str) -> Result<Value, Error> {
        if script.len() > SCRIPT_SIZE_LIMIT {
            return Err(Error::TooLarge(format!(
                "the script is {} bytes and a page takes at most {SCRIPT_SIZE_LIMIT} (4 MiB)",
                script.len()
            )));
        }
        Ok(self
            .host
            .evaluate(window, script.to_string(), SCRIPT_LIMIT)
            .await?)
    }
}
