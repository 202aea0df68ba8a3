"""Image throughput: toolrun's image code path (in-process) against sharp, same input, same run.

    .venv/bin/python -m bench.image_bench [--seconds 2] [--rounds 3] [--formats jpeg,webp,avif]
                                          [--skip-sharp]

Task (sharp's published benchmark): decode a 2725x2225 photo-like JPEG,
resize to 720x588 (cover, Lanczos3), encode JPEG q80; also WebP q80 and AVIF
q50 output. Modes: ``1 thread`` = one operation at a time, libvips
concurrency 1 on both sides; ``2 threads`` = two operations in flight, libvips
concurrency 1 each (toolrun: image pool of 2; sharp: UV_THREADPOOL_SIZE=2).
Both encode alike: sharp's AVIF default is 4:4:4 chroma, libvips' (toolrun's)
4:2:0 below quality 90, so sharp is told ``chromaSubsampling: '4:2:0'``.
Then the peak RSS of a separate process resizing a 10000x10000 PNG.

sharp is installed with npm into a temporary folder by this script. Prints a
table and writes bench/results/image.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from toolrun.config import Settings
from toolrun.tools.image import vips
from toolrun.tools.image.models import ResizeInput
from toolrun.tools.image.pipeline import process, process_sync

RESULTS = Path(__file__).parent / "results" / "image.json"
SHARP_VERSION = "0.35"
MIB = 1024 * 1024
MIN_OPS = 3  # per cell, so slow encoders (AVIF) still give a rate

TASKS = [("jpeg", 80), ("webp", 80), ("avif", 50)]
MODES = [("1 thread", 1), ("2 threads", 2)]

SHARP_SCRIPT = r"""
const sharp = require('sharp');
const [input, fmt, quality, parallel, seconds, outDir, minOps] = process.argv.slice(2);
sharp.cache(false);
sharp.concurrency(1);
let n = 0;
const options = {quality: Number(quality)};
if (fmt === 'avif') options.chromaSubsampling = '4:2:0';  // as libvips' heifsave below q90
const one = (i) => sharp(input).resize(720, 588, {fit: 'cover'})
  .toFormat(fmt, options).toFile(`${outDir}/sharp-${i}.${fmt}`);
(async () => {
  for (let i = 0; i < 2; i++) await one(0);  // warm-up
  const end = Date.now() + Number(seconds) * 1000;
  const start = process.hrtime.bigint();
  const worker = async (w) => {
    while (Date.now() < end || n < Number(minOps)) { await one(w); n++; }
  };
  await Promise.all(Array.from({length: Number(parallel)}, (_, w) => worker(w)));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ops: n, seconds: elapsed}));
})();
"""

SHARP_RSS_SCRIPT = r"""
const sharp = require('sharp');
const [input, output] = process.argv.slice(2);
sharp.cache(false);
sharp.concurrency(1);
sharp(input).resize(720).jpeg({quality: 80}).toFile(output).then(() => {
  const hwm = require('fs').readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\s+(\d+)/)[1];
  console.log(JSON.stringify({maxRssKiB: Number(hwm)}));
});
"""


def make_photo(path: Path) -> None:
    """A deterministic photo-like 2725x2225 JPEG (smooth noise in three bands)."""
    noise = vips.pyvips.Image.gaussnoise(2725, 2225, mean=128, sigma=60, seed=42)
    bands = noise.bandjoin([noise.rot180(), noise.flip("horizontal")]).gaussblur(2)
    bands.cast("uchar").copy(interpretation="srgb").jpegsave(str(path), Q=90)


def make_big_png(path: Path) -> None:
    """A 10000x10000 RGB PNG: two gradients and a checkerboard (100 megapixels, about 4 MB)."""
    xyz = vips.pyvips.Image.xyz(10000, 10000)
    x, y = xyz[0], xyz[1]
    checks = ((x // 50 + y // 50) % 2) * 200
    image = (x * 0.0255).bandjoin([y * 0.0255, checks]).cast("uchar")
    image.copy(interpretation="srgb").pngsave(str(path), compression=6)


def install_sharp(folder: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm not found")
    (folder / "package.json").write_text('{"name": "toolrun-image-bench", "private": true}')
    subprocess.run(
        [npm, "install", f"sharp@{SHARP_VERSION}", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=folder,
        check=True,
    )


def sharp_versions(folder: Path) -> dict[str, str]:
    out = subprocess.run(
        ["node", "-e", "const s=require('sharp');console.log(JSON.stringify(s.versions))"],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    )
    versions: dict[str, str] = json.loads(out.stdout)
    return versions


def run_sharp(
    folder: Path, photo: Path, fmt: str, quality: int, parallel: int, seconds: float
) -> float:
    env = {**os.environ, "UV_THREADPOOL_SIZE": str(parallel), "VIPS_CONCURRENCY": "1"}
    script = folder / "bench.js"
    script.write_text(SHARP_SCRIPT)
    out = subprocess.run(
        [
            "node",
            str(script),
            str(photo),
            fmt,
            str(quality),
            str(parallel),
            str(seconds),
            str(folder),
            str(MIN_OPS),
        ],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result = json.loads(out.stdout)
    return float(result["ops"]) / float(result["seconds"])


async def run_toolrun(
    photo: Path, out_dir: Path, fmt: str, quality: int, parallel: int, seconds: float
) -> float:
    vips.configure(pool_size=parallel, vips_concurrency=1)
    settings = Settings(data_dir=out_dir)
    options = ResizeInput.model_validate(
        {
            "taskId": "bench",
            "width": 720,
            "height": 588,
            "fit": "cover",
            "format": fmt,
            "quality": quality,
        }
    )
    deadline = datetime.now(UTC) + timedelta(hours=1)

    async def one(worker: int) -> None:
        await process("resize", options, photo, out_dir / f"toolrun-{worker}", settings, deadline)

    for _ in range(2):  # warm-up
        await one(0)
    count = 0
    end = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        nonlocal count
        while time.perf_counter() < end or count < MIN_OPS:
            await one(index)
            count += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker(index) for index in range(parallel)))
    return count / (time.perf_counter() - start)


def peak_rss_kib() -> int:
    """This process's peak RSS (VmHWM: unlike ru_maxrss, not inherited from a forking parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss_child(big_png: Path, out: Path) -> None:
    """Run in a fresh process: resize the big PNG once, print the peak RSS in KiB."""
    baseline = peak_rss_kib()
    vips.configure(pool_size=1, vips_concurrency=1)
    options = ResizeInput(taskId="bench", width=720, format="jpeg", quality=80)
    deadline = datetime.now(UTC) + timedelta(hours=1)
    process_sync("resize", options, big_png, out, Settings(data_dir=out.parent), deadline)
    sys.stdout.write(json.dumps({"maxRssKiB": peak_rss_kib(), "importsKiB": baseline}) + "\n")


def measure_rss(big_png: Path, work: Path, sharp_dir: Path | None) -> dict[str, float | None]:
    ours = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.image_bench",
            "--rss-child",
            str(big_png),
            str(work / "rss.jpg"),
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    child = json.loads(ours.stdout)
    result: dict[str, float | None] = {
        "toolrun_peak_rss_mib": round(child["maxRssKiB"] / 1024, 1),
        "toolrun_rss_after_imports_mib": round(child["importsKiB"] / 1024, 1),
        "sharp_peak_rss_mib": None,
    }
    if sharp_dir is not None:
        script = sharp_dir / "rss.js"
        script.write_text(SHARP_RSS_SCRIPT)
        theirs = subprocess.run(
            ["node", str(script), str(big_png), str(work / "rss-sharp.jpg")],
            cwd=sharp_dir,
            env={**os.environ, "UV_THREADPOOL_SIZE": "1"},
            check=True,
            capture_output=True,
            text=True,
        )
        result["sharp_peak_rss_mib"] = round(json.loads(theirs.stdout)["maxRssKiB"] / 1024, 1)
    return result


def fmt_ops(value: float | None) -> str:
    return "-" if value is None else f"{value:8.2f}"


def measure_cell(
    photo: Path,
    work: Path,
    sharp_dir: Path | None,
    fmt: str,
    quality: int,
    mode: str,
    parallel: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Alternate toolrun and sharp for ``args.rounds`` rounds (the machine may be shared:
    alternating spreads any outside load over both); report medians."""
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.rounds):
        ours.append(asyncio.run(run_toolrun(photo, work, fmt, quality, parallel, args.seconds)))
        if sharp_dir is not None:
            theirs.append(run_sharp(sharp_dir, photo, fmt, quality, parallel, args.seconds))
    ours_ops = statistics.median(ours)
    theirs_ops = statistics.median(theirs) if theirs else None
    ratio = None if theirs_ops is None else ours_ops / theirs_ops
    print(
        f"{fmt:5} {mode:10} toolrun {fmt_ops(ours_ops)} ops/s   sharp {fmt_ops(theirs_ops)}"
        f" ops/s   ratio {'-' if ratio is None else f'{ratio:.2f}'}",
        flush=True,
    )
    return {
        "task": f"2725x2225 JPEG -> 720x588 cover -> {fmt} q{quality}",
        "format": fmt,
        "mode": mode,
        "toolrun_ops_per_s": round(ours_ops, 2),
        "sharp_ops_per_s": None if theirs_ops is None else round(theirs_ops, 2),
        "ratio": None if ratio is None else round(ratio, 3),
        "toolrun_rounds": [round(value, 2) for value in ours],
        "sharp_rounds": [round(value, 2) for value in theirs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per cell")
    parser.add_argument("--skip-sharp", action="store_true", help="toolrun figures only")
    parser.add_argument(
        "--formats", default="jpeg,webp,avif", help="output formats to measure, comma-separated"
    )
    parser.add_argument("--rss-child", nargs=2, metavar=("PNG", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child(Path(args.rss_child[0]), Path(args.rss_child[1]))
        return

    with tempfile.TemporaryDirectory(prefix="toolrun-image-bench-") as tmp:
        work = Path(tmp)
        photo, big_png = work / "photo.jpg", work / "big.png"
        make_photo(photo)
        make_big_png(big_png)
        sharp_dir: Path | None = None
        versions: dict[str, str] = {}
        if not args.skip_sharp:
            sharp_dir = work / "sharp"
            sharp_dir.mkdir()
            install_sharp(sharp_dir)
            versions = sharp_versions(sharp_dir)
        wanted = set(args.formats.split(","))
        rows = [
            measure_cell(photo, work, sharp_dir, fmt, quality, mode, parallel, args)
            for fmt, quality in TASKS
            if fmt in wanted
            for mode, parallel in MODES
        ]
        rss = measure_rss(big_png, work, sharp_dir)
        ours_rss, sharp_rss = rss["toolrun_peak_rss_mib"], rss["sharp_peak_rss_mib"]
        print(
            f"peak RSS resizing a 10000x10000 PNG to 720 wide: toolrun {ours_rss:.1f} MiB, "
            f"sharp {'-' if sharp_rss is None else f'{sharp_rss:.1f}'} MiB"
        )
    report = {
        "command": " ".join([".venv/bin/python -m bench.image_bench", *sys.argv[1:]]),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "libvips_toolrun": ".".join(str(vips.pyvips.version(i)) for i in range(3)),
        "sharp": versions.get("sharp"),
        "libvips_sharp": versions.get("vips"),
        "seconds_per_round": args.seconds,
        "rounds": args.rounds,
        "load_average_after": os.getloadavg(),
        "throughput": rows,
        "memory": rss,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {RESULTS}")


if __name__ == "__main__":
    main()
