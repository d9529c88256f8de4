//! Screenshot: the session's shots in cua's terms (placeholder until the
//! session's screenshot layer lands).

use tonic::{Response, Status};
use wayrig_cua_proto::v1;
use wayrig_services::Session;

pub async fn screenshot(
    _session: &Session,
    _r: v1::ScreenshotRequest,
) -> Result<Response<v1::ScreenshotResponse>, Status> {
    Err(crate::errors::unimplemented(
        "ComputerService.Screenshot",
        "screenshot",
    ))
}
