//! AT-SPI objects as the services name them: a stable id from an object's bus
//! name and path, and a typed proxy for any interface of one object.
//!
//! The reading, acting and fact readers of the AT-SPI client stand on this file.

use atspi::ObjectRefOwned;
use zbus::proxy::CacheProperties;

use crate::access::node_id;
use crate::model::Error;

/// The node id of an object reference; `None` for the null reference.
pub(super) fn ref_id(r: &ObjectRefOwned) -> Option<u64> {
    r.name().map(|n| node_id(n.as_str(), r.path_as_str()))
}

/// A proxy of any AT-SPI interface for one object, property caching off
/// (atspi's defaults name the wrong service and cache stale properties).
pub(super) async fn object_proxy<P>(
    conn: &zbus::Connection,
    obj: &ObjectRefOwned,
) -> Result<P, Error>
where
    P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
{
    let name = obj
        .name()
        .ok_or_else(|| Error::NoElement("null object".into()))?
        .clone();
    zbus::proxy::Builder::<P>::new(conn)
        .destination(name)
        .and_then(|b| b.path(obj.path().clone()))
        .map_err(|e| Error::Failed(format!("proxy: {e}")))?
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .map_err(|e| Error::Failed(format!("proxy: {e}")))
}
