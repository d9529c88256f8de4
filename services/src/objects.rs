//! AT-SPI objects as the services name them: a stable id from an object's bus
//! name and path, and a typed proxy for any interface of one object.
//!
//! Both the mirror (a11y) and its fact readers (facts) stand on this file.

use atspi::ObjectRefOwned;
use zbus::proxy::CacheProperties;

use crate::model::Error;

/// A stable 64-bit id for an accessible object: FNV-1a over its bus name and path.
pub fn node_id(bus_name: &str, path: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bus_name.bytes().chain([0u8]).chain(path.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

pub(crate) fn ref_id(r: &ObjectRefOwned) -> Option<u64> {
    r.name().map(|n| node_id(n.as_str(), r.path_as_str()))
}

/// A proxy of any AT-SPI interface for one object, property caching off
/// (atspi's defaults name the wrong service and cache stale properties).
pub async fn object_proxy<P>(conn: &zbus::Connection, obj: &ObjectRefOwned) -> Result<P, Error>
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
