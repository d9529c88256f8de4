//! The clipboard's text: read whoever owns it, or set as the host's own, with a
//! generation that moves on whenever its content changes.

use wayrig_host::{ClipboardText, CLIPBOARD_TEXT_LIMIT};

use super::Session;
use crate::model::Error;

impl Session {
    /// The clipboard's text (`None` when it is empty or offers no text) and
    /// its generation.
    pub async fn clipboard(&self) -> Result<ClipboardText, Error> {
        self.require_clipboard()?;
        Ok(self.host.clipboard().await?)
    }

    /// Put `text` on the clipboard for the apps to paste, the host owning it;
    /// answers the clipboard's new generation.
    pub async fn set_clipboard(&self, text: String) -> Result<u64, Error> {
        self.require_clipboard()?;
        if text.len() > CLIPBOARD_TEXT_LIMIT {
            return Err(Error::TooLarge(format!(
                "the text is {} bytes of UTF-8 and the clipboard takes at most \
                 {CLIPBOARD_TEXT_LIMIT} bytes (1 MiB); send less text",
                text.len()
            )));
        }
        Ok(self.host.set_clipboard(text).await?)
    }

    fn require_clipboard(&self) -> Result<(), Error> {
        if self.capabilities().clipboard {
            return Ok(());
        }
        let why = self
            .limit(wayrig_host::Capability::Clipboard)
            .unwrap_or_else(|| {
                "the host this session runs on offers no clipboard; host the apps \
                 in Wayrig's own compositor (wayrig run) to read and set it"
                    .into()
            });
        Err(Error::Unsupported(format!("clipboard: {why}")))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::fake_host::{window, FakeHost, Temper};
    use super::*;

    async fn session_over(host: FakeHost) -> Session {
        Session::without_accessibility(Arc::new(host))
            .await
            .unwrap()
    }

    fn host() -> FakeHost {
        FakeHost::new(vec![window(1, "Main")], Temper::Stubborn, 64)
    }

    #[tokio::test(start_paused = true)]
    async fn text_up_to_one_mib_is_set_and_more_is_refused_saying_the_limit() {
        let session = session_over(host()).await;
        let before = session.clipboard().await.unwrap();
        assert_eq!(before.text, None);

        let most = "é".repeat(CLIPBOARD_TEXT_LIMIT / 2);
        assert_eq!(most.len(), CLIPBOARD_TEXT_LIMIT);
        let generation = session.set_clipboard(most.clone()).await.unwrap();
        assert_ne!(generation, before.generation);
        let now = session.clipboard().await.unwrap();
        assert_eq!(
            (now.text.as_deref(), now.generation),
            (Some(&*most), generation)
        );

        let over = format!("{most}x");
        match session.set_clipboard(over).await {
            Err(Error::TooLarge(why)) => assert!(why.contains("1048576"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            session.clipboard().await.unwrap(),
            now,
            "a refused text leaves the clipboard as it was"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_host_without_a_clipboard_is_unsupported_saying_where_one_is() {
        let session = session_over(host().without_clipboard()).await;
        for err in [
            session.clipboard().await.unwrap_err(),
            session.set_clipboard("text".into()).await.unwrap_err(),
        ] {
            match err {
                Error::Unsupported(why) => assert!(why.contains("wayrig run"), "{why}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
