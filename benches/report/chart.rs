//! `docs/benchmarks.svg`: bars of cost per operation, fire CPU and memory, and the
//! lateness distributions on a log scale.

use std::fmt::Write as _;

use crate::common::Peer;
use crate::format::*;
use crate::machine::Machine;
use crate::measure::*;

pub(crate) const PUNCTUAL_COLOR: &str = "#d9480f";
pub(crate) const PEER_COLOR: &str = "#5c7cfa";
pub(crate) const BARE_COLOR: &str = "#adb5bd";

pub(crate) fn color(peer: Peer) -> &'static str {
    match peer {
        Peer::Punctual
        | Peer::PunctualInTokio
        | Peer::Punctual100us
        | Peer::PunctualSmol
        | Peer::PunctualSmol100us
        | Peer::PunctualTokio => PUNCTUAL_COLOR,
        Peer::Bare | Peer::NoTimer | Peer::ArmFloor => BARE_COLOR,
        _ => PEER_COLOR,
    }
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A panel of horizontal bars, one per peer, on a linear scale from zero.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bars(
    svg: &mut String,
    x: f64,
    y: f64,
    width: f64,
    title: &str,
    unit: &str,
    rows: &[(Peer, f64)],
    label_width: f64,
) -> f64 {
    let row_h = 18.0;
    let _ = writeln!(
        svg,
        r#"<text x="{x}" y="{}" class="h">{}</text>"#,
        y + 12.0,
        escape(title)
    );
    let top = y + 22.0;
    let max = rows.iter().map(|r| r.1).fold(0.0_f64, f64::max).max(1e-9);
    let bar_w = width - label_width - 60.0;
    for (i, &(peer, value)) in rows.iter().enumerate() {
        let yy = top + i as f64 * row_h;
        let w = (value / max * bar_w).max(1.0);
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" class="l" text-anchor="end">{}</text>"#,
            x + label_width - 6.0,
            yy + 12.0,
            peer.name()
        );
        let _ = writeln!(
            svg,
            r#"<rect x="{}" y="{yy}" width="{w:.1}" height="{}" fill="{}"/>"#,
            x + label_width,
            row_h - 4.0,
            color(peer)
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{}" class="v">{} {unit}</text>"#,
            x + label_width + w + 4.0,
            yy + 12.0,
            fmt_ns(value)
        );
    }
    top + rows.len() as f64 * row_h
}

pub(crate) fn chart(r: &Results, m: &Machine) -> String {
    let width = 960.0;
    let mut body = String::new();
    let mut y = 40.0;

    // Row 1: three cost panels.
    let panel_w = width / 3.0 - 10.0;
    let mut ready: Vec<(Peer, f64)> = vec![];
    if let Some(&b) = r.ready.get(&Peer::Bare) {
        ready.push((Peer::Bare, b));
    }
    ready.extend(Peer::timers().filter_map(|p| r.ready.get(&p).map(|&v| (p, v))));
    let ac: Vec<(Peer, f64)> = Peer::timers()
        .chain([Peer::ArmFloor])
        .filter_map(|p| r.arm_cancel.get(&p).map(|&v| (p, v)))
        .collect();
    let aca: Vec<(Peer, f64)> = Peer::timers()
        .filter_map(|p| r.arm_cancel_armed.get(&p).map(|&v| (p, v)))
        .collect();
    let y1 = bars(
        &mut body,
        10.0,
        y,
        panel_w,
        "ready (ns per op)",
        "ns",
        &ready,
        100.0,
    );
    let y2 = bars(
        &mut body,
        10.0 + width / 3.0,
        y,
        panel_w,
        "arm + cancel (ns per op)",
        "ns",
        &ac,
        100.0,
    );
    let y3 = bars(
        &mut body,
        10.0 + 2.0 * width / 3.0,
        y,
        panel_w,
        &format!("arm + cancel, {ARMED} armed (ns)"),
        "ns",
        &aca,
        100.0,
    );
    y = y1.max(y2).max(y3) + 24.0;

    // Row 2: fire CPU and memory.
    let fire: Vec<(Peer, f64)> = fire_peers()
        .iter()
        .filter_map(|p| {
            r.fire
                .get(p)
                .copied()
                .flatten()
                .map(|c| (*p, c.cpu.as_secs_f64() * 1000.0))
        })
        .collect();
    let mem: Vec<(Peer, f64)> = Peer::timers()
        .filter_map(|p| {
            r.memory
                .get(&p)
                .filter(|m| m.held_all())
                .map(|m| (p, m.total()))
        })
        .collect();
    let half = width / 2.0 - 10.0;
    let y4 = bars(
        &mut body,
        10.0,
        y,
        half,
        &format!("fire {FIRE_N} deadlines: process CPU (ms)"),
        "ms",
        &fire,
        100.0,
    );
    let y5 = bars(
        &mut body,
        10.0 + width / 2.0,
        y,
        half,
        "bytes per armed deadline",
        "B",
        &mem,
        100.0,
    );
    y = y4.max(y5) + 24.0;

    // Row 3: lateness on a log scale of microseconds.
    let _ = writeln!(
        body,
        r#"<text x="10" y="{}" class="h">lateness on the real clock (µs, log scale): min–max line, box from median to p99, dot at the median</text>"#,
        y + 12.0
    );
    let top = y + 24.0;
    let rows: Vec<_> = lateness_peers()
        .iter()
        .filter_map(|(p, tick)| r.lateness.get(p).map(|l| (*p, *tick, l.0)))
        .collect();
    // Wide enough for the longest peer's name (at most about 6.5 px a character at 11 px).
    let longest = rows.iter().map(|(p, ..)| p.name().len()).max().unwrap_or(0);
    let label_w = (longest as f64 * 6.5 + 12.0).max(110.0);
    let plot_x = 10.0 + label_w;
    let plot_w = width - plot_x - 270.0;
    let (lo, hi) = (1.0_f64, 100_000.0_f64); // 1 µs .. 100 ms
    let scale = |ns: i64| {
        let us = (ns as f64 / 1000.0).clamp(lo, hi);
        plot_x + (us.log10() - lo.log10()) / (hi.log10() - lo.log10()) * plot_w
    };
    let row_h = 22.0;
    let bottom = top + rows.len() as f64 * row_h;
    for decade in 0..=5 {
        let us = 10f64.powi(decade);
        let xx = scale((us * 1000.0) as i64);
        let label = match decade {
            0 => "1 µs".to_string(),
            1 => "10 µs".to_string(),
            2 => "100 µs".to_string(),
            3 => "1 ms".to_string(),
            4 => "10 ms".to_string(),
            _ => "100 ms".to_string(),
        };
        let _ = writeln!(
            body,
            r##"<line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{bottom}" stroke="#dee2e6"/><text x="{xx:.1}" y="{}" class="v" text-anchor="middle">{label}</text>"##,
            top - 4.0,
            bottom + 12.0
        );
    }
    for (i, (peer, tick, l)) in rows.iter().enumerate() {
        let yy = top + i as f64 * row_h;
        let mid = yy + row_h / 2.0 - 2.0;
        let c = color(*peer);
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" class="l" text-anchor="end">{}</text>"#,
            plot_x - 6.0,
            mid + 4.0,
            peer.name()
        );
        let _ = writeln!(
            body,
            r#"<line x1="{:.1}" y1="{mid}" x2="{:.1}" y2="{mid}" stroke="{c}"/>"#,
            scale(l.min),
            scale(l.max)
        );
        let (bx, bw) = (scale(l.median), (scale(l.p99) - scale(l.median)).max(1.5));
        let _ = writeln!(
            body,
            r#"<rect x="{bx:.1}" y="{}" width="{bw:.1}" height="10" fill="{c}" fill-opacity="0.5" stroke="{c}"/>"#,
            mid - 5.0
        );
        let _ = writeln!(
            body,
            r#"<circle cx="{bx:.1}" cy="{mid}" r="3.5" fill="{c}"/>"#
        );
        let early = if l.early > 0 {
            format!(", {} EARLY", l.early)
        } else {
            String::new()
        };
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" class="v">tick {tick}: median {}, p99 {}{early}</text>"#,
            plot_x + plot_w + 8.0,
            mid + 4.0,
            fmt_us(l.median),
            fmt_us(l.p99)
        );
    }
    y = bottom + 30.0;
    let _ = writeln!(
        body,
        r#"<text x="10" y="{y}" class="v">{}, {} cores · {} · lower is better everywhere</text>"#,
        escape(&m.cpu),
        m.cores,
        escape(&m.rustc)
    );
    let height = y + 12.0;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">
<style>.h{{font-size:13px;font-weight:bold;fill:#212529}} .l{{font-size:11px;fill:#212529}} .v{{font-size:10px;fill:#495057}}</style>
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="22" class="h" style="font-size:16px">punctual beside tokio (both its timers), async-io, futures-timer, futures-time and embassy-time</text>
{body}</svg>
"##
    )
}
