//! Command-line parsing for `wayrig-testclient`.
//! Hand-rolled over `std::env::args` so the client stays dependency-light.

/// How many frames to draw after the first one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frames {
    /// Draw this many callback-driven frames after the first, then go idle.
    Count(u32),
    /// Keep requesting frame callbacks for as long as the client runs.
    Forever,
}

/// Parsed command-line options.
#[derive(Debug, Clone)]
pub struct Options {
    pub title: String,
    pub app_id: String,
    pub frames: Frames,
    pub refuse_close: bool,
    pub width: u32,
    pub height: u32,
    /// Base fill colour as `0xRRGGBB`.
    pub color: u32,
    /// How long drawing a callback-driven frame keeps the client busy.
    pub draw_time: std::time::Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            title: "wayrig-testclient".to_owned(),
            app_id: "wayrig.testclient".to_owned(),
            frames: Frames::Count(0),
            refuse_close: false,
            width: 400,
            height: 300,
            color: 0x3366cc,
            draw_time: std::time::Duration::ZERO,
        }
    }
}

pub const USAGE: &str = "\
usage: wayrig-testclient [OPTIONS]

  --title T            toplevel title (default: wayrig-testclient)
  --app-id A           toplevel app id (default: wayrig.testclient)
  --frames N|forever   frames to draw on frame callbacks after the first (default: 0)
  --refuse-close       ignore xdg_toplevel.close instead of exiting
  --size WxH           size used when the compositor leaves it to us (default: 400x300)
  --color RRGGBB       base fill colour (default: 3366cc)
  --draw-ms MS         busy time per callback-driven frame, as a slow toolkit's (default: 0)
  -h, --help           print this help

Prints one JSON object per line on stdout describing what happens.

SIGUSR1 (always on, no flag) unmaps the toplevel and maps it again on the same
xdg_toplevel, so the compositor sees a new mapping of the same window: it
commits a null buffer and prints {\"ev\":\"unmapped\"}, makes a fresh initial
commit, acks the configure that answers it, commits a buffer at that size and
prints {\"ev\":\"remapped\",\"width\":W,\"height\":H}. A SIGUSR1 that comes
while the window is not mapped is served once it is (several at once count
as one).";

/// What the command line asks for.
pub enum Command {
    Run(Options),
    Help,
}

/// Parses the arguments that follow the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut opts = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Accept both `--opt value` and `--opt=value`.
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--title" => opts.title = value()?,
            "--app-id" => opts.app_id = value()?,
            "--frames" => opts.frames = parse_frames(&value()?)?,
            "--size" => (opts.width, opts.height) = parse_size(&value()?)?,
            "--color" => opts.color = parse_color(&value()?)?,
            "--draw-ms" => {
                let v = value()?;
                let ms = v
                    .parse()
                    .map_err(|_| format!("--draw-ms expects milliseconds, got {v:?}"))?;
                opts.draw_time = std::time::Duration::from_millis(ms);
            }
            "--refuse-close" if inline.is_none() => opts.refuse_close = true,
            _ => return Err(format!("unknown argument: {name}")),
        }
    }
    Ok(Command::Run(opts))
}

fn parse_frames(s: &str) -> Result<Frames, String> {
    if s == "forever" {
        return Ok(Frames::Forever);
    }
    s.parse()
        .map(Frames::Count)
        .map_err(|_| format!("--frames expects a number or 'forever', got {s:?}"))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--size expects WxH with both > 0, got {s:?}");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.parse().map_err(|_| bad())?;
    let h: u32 = h.parse().map_err(|_| bad())?;
    if w == 0 || h == 0 {
        return Err(bad());
    }
    Ok((w, h))
}

fn parse_color(s: &str) -> Result<u32, String> {
    let hex = s.strip_prefix('#').unwrap_or(s);
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("--color expects RRGGBB, got {s:?}"));
    }
    u32::from_str_radix(hex, 16).map_err(|_| format!("--color expects RRGGBB, got {s:?}"))
}
