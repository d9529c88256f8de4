//! Builds the small C shim over libvpx's VP8 encoder, against the libvpx the
//! system has (pkg-config finds its headers, so the struct layouts are its own).

fn main() {
    let vpx = pkg_config::Config::new()
        .atleast_version("1.8")
        .probe("vpx")
        .expect("libvpx is missing: run scripts/install-deps (Debian's libvpx-dev)");
    let mut build = cc::Build::new();
    build.file("src/vp8_shim.c").warnings(true);
    for dir in &vpx.include_paths {
        build.include(dir);
    }
    build.compile("wayrig_vp8_shim");
    println!("cargo:rerun-if-changed=src/vp8_shim.c");
}
