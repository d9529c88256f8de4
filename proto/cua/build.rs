//! Compiles the cua.env.v1 protos with protox (no system protoc) and generates
//! their prost messages, tonic servers and clients, and the encoded
//! descriptors (for reading messages by name) into OUT_DIR.

use prost::Message;

/// The five files, relative to the include root `proto/` (this crate's parent).
const FILES: [&str; 5] = [
    "cua/env/v1/common.proto",
    "cua/env/v1/windows.proto",
    "cua/env/v1/accessibility.proto",
    "cua/env/v1/system.proto",
    "cua/env/v1/computer.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=env");
    let fds = protox::compile(FILES, [".."])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("cua_env_v1.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
