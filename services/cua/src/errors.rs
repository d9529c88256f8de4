//! The session's errors as cua.env.v1 statuses: a gRPC code plus one
//! `ErrorInfo` in `grpc-status-details-bin`, as the wire notes define them.

use tonic::{Code, Status};
use wayrig_cua_proto::{error_status, v1};
use wayrig_services::Error;

use v1::ErrorReason as Reason;

/// A status with its `ErrorInfo` detail.
pub fn status(code: Code, reason: Reason, message: impl Into<String>) -> Status {
    let message = message.into();
    error_status(
        code,
        v1::ErrorInfo {
            reason: reason as i32,
            message,
            ..Default::default()
        },
    )
}

/// A request the server cannot take as it is.
pub fn invalid(message: impl Into<String>) -> Status {
    status(Code::InvalidArgument, Reason::Unspecified, message)
}

/// A feature the server or its host lacks: UNIMPLEMENTED for an RPC Wayrig
/// does not serve, FAILED_PRECONDITION for one this host cannot do now.
pub fn unsupported(code: Code, feature: &str, message: impl Into<String>) -> Status {
    error_status(
        code,
        v1::ErrorInfo {
            reason: Reason::FeatureUnsupported as i32,
            message: message.into(),
            feature: feature.to_string(),
            ..Default::default()
        },
    )
}

/// An RPC Wayrig does not serve.
pub fn unimplemented(rpc: &str, feature: &str) -> Status {
    unsupported(
        Code::Unimplemented,
        feature,
        format!("{rpc} is not served by Wayrig; GetCapabilities lists what is"),
    )
}

/// A session error in cua's terms; `feature` names what was asked, for
/// errors that say a feature is missing.
pub fn from_session(e: Error, feature: &str) -> Status {
    let message = e.to_string();
    match e {
        Error::NoWindow(_) => status(Code::NotFound, Reason::TargetUnavailable, message),
        Error::StaleWindow(_) => status(
            Code::FailedPrecondition,
            Reason::StaleHandle,
            format!("{message}; take a new WindowRef from ListWindows"),
        ),
        Error::NoElement(_) => status(Code::NotFound, Reason::TargetUnavailable, message),
        Error::StaleElement(_) => status(Code::FailedPrecondition, Reason::StaleSnapshot, message),
        Error::NotShown(_) => status(Code::FailedPrecondition, Reason::TargetUnavailable, message),
        Error::StaleGeometry(_) => status(
            Code::FailedPrecondition,
            Reason::StaleGeometry,
            format!("{message}; take a new Screenshot"),
        ),
        Error::Ambiguous { .. } | Error::InvalidRequest(_) => invalid(message),
        Error::TooLarge(_) => status(Code::InvalidArgument, Reason::LimitExceeded, message),
        Error::NotFound(_) => status(Code::NotFound, Reason::PathNotFound, message),
        Error::Busy(_) => status(Code::Unavailable, Reason::TargetUnavailable, message),
        Error::Cancelled(_) | Error::Interrupted { .. } => {
            status(Code::Aborted, Reason::DeliveryFailed, message)
        }
        Error::Unsupported(_) => unsupported(Code::FailedPrecondition, feature, message),
        Error::WouldActivate(_) => status(
            Code::FailedPrecondition,
            Reason::WouldRequireActivation,
            format!("{message}; use DELIVERY_FOREGROUND or DELIVERY_AUTO"),
        ),
        Error::Timeout(_) => status(Code::DeadlineExceeded, Reason::DeliveryFailed, message),
        Error::Failed(_) => status(Code::Internal, Reason::Internal, message),
    }
}

/// An enum field's value, or INVALID_ARGUMENT for one this server does not know.
pub fn known<E: TryFrom<i32>>(value: i32, field: &str) -> Result<E, Status> {
    E::try_from(value)
        .map_err(|_| invalid(format!("{field} {value} is not a value this server knows")))
}
