//! The cua.env.v1 gRPC protocol, compiled from `proto/cua/env/v1`: its messages,
//! server traits and clients, and the `ErrorInfo` a failed call carries in its status details.

use prost::Message;

/// The generated code, at the path of its proto package.
pub mod cua {
    pub mod env {
        #[allow(clippy::all)]
        pub mod v1 {
            tonic::include_proto!("cua.env.v1");
        }
    }
}

pub use cua::env::v1;

/// The protos' `FileDescriptorSet`, encoded: what reads a message whose
/// type is known only by name (a recorded session's trace).
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cua_env_v1.bin"));

/// google.rpc.Status, whose encoding is the `grpc-status-details-bin` trailer.
pub mod rpc {
    /// A gRPC status with typed details; cua.env.v1 puts one `ErrorInfo` in them.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Status {
        #[prost(int32, tag = "1")]
        pub code: i32,
        #[prost(string, tag = "2")]
        pub message: String,
        #[prost(message, repeated, tag = "3")]
        pub details: Vec<prost_types::Any>,
    }
}

/// The `Any` type URL of [`v1::ErrorInfo`] in a status's details.
pub const ERROR_INFO_TYPE_URL: &str = "type.googleapis.com/cua.env.v1.ErrorInfo";

/// A status with `code`, `info.message` as its message, and details holding a
/// google.rpc.Status whose one detail is `info`.
pub fn error_status(code: tonic::Code, info: v1::ErrorInfo) -> tonic::Status {
    let message = info.message.clone();
    let details = rpc::Status {
        code: code as i32,
        message: message.clone(),
        details: vec![prost_types::Any {
            type_url: ERROR_INFO_TYPE_URL.to_owned(),
            value: info.encode_to_vec(),
        }],
    };
    tonic::Status::with_details(code, message, details.encode_to_vec().into())
}

/// The `ErrorInfo` in a status's details, if it carries one (details are
/// optional: a status without them, or with others, gives `None`).
pub fn error_info(status: &tonic::Status) -> Option<v1::ErrorInfo> {
    let details = rpc::Status::decode(status.details()).ok()?;
    let any = details
        .details
        .iter()
        .find(|any| any.type_url == ERROR_INFO_TYPE_URL)?;
    v1::ErrorInfo::decode(any.value.as_slice()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use v1::{ErrorInfo, ErrorReason};

    #[test]
    fn error_info_round_trips_through_the_trailer() {
        let info = ErrorInfo {
            reason: ErrorReason::StaleHandle as i32,
            message: "window w7 is at epoch 3, not 2".into(),
            feature: "windows".into(),
            metadata: [("expected_epoch".to_owned(), "3".to_owned())].into(),
        };
        let status = error_status(tonic::Code::FailedPrecondition, info.clone());
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        assert_eq!(status.message(), info.message);
        assert_eq!(error_info(&status).as_ref(), Some(&info));

        // Through the headers a trailers-only response carries, as a client reads them.
        let response = status.into_http::<()>();
        assert!(response.headers().contains_key("grpc-status-details-bin"));
        let received = tonic::Status::from_header_map(response.headers()).unwrap();
        assert_eq!(received.code(), tonic::Code::FailedPrecondition);
        let details = rpc::Status::decode(received.details()).unwrap();
        assert_eq!(details.code, tonic::Code::FailedPrecondition as i32);
        assert_eq!(details.details.len(), 1);
        assert_eq!(details.details[0].type_url, ERROR_INFO_TYPE_URL);
        assert_eq!(error_info(&received), Some(info));
    }

    #[test]
    fn a_status_without_details_has_no_error_info() {
        assert_eq!(error_info(&tonic::Status::unimplemented("no")), None);
    }
}
