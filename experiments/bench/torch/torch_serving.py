#!/usr/bin/python3
"""The PyTorch peer of the serving bench: times timm's own ViT in inference, as ort_bench.js times ONNX Runtime.

    PYTHONPATH=TIMM_SRC /usr/bin/python3 torch_serving.py vit_small_patch16_224 [--batch 1] [--iters 30] [--threads 2]

timm's model (random init, seed 0, 1000 classes, 224 px) in eval mode under torch.inference_mode(), float32,
torch.set_num_threads(--threads); the input tensor is built once; 3 warm-up runs, then --iters timed forwards.
Prints one JSON line: {"peer": "pytorch VERSION", "model", "batch", "threads", "median_ms", "min_ms", "img_per_s"}.

Debian's python3-torch calls whatever libblas.so.3 is installed: as ../shared/bench/vit_ref.py does, this re-executes
itself with the OpenMP build of OpenBLAS (the pthread build fights torch's OpenMP pool) and, where OpenBLAS would fall
back to a generic SSE3 kernel on a CPU newer than itself, with OPENBLAS_CORETYPE set from the CPU's flags. The line's
"blas" says which core OpenBLAS runs. TORCH_SERVING_BLAS=keep disables both.
"""
import argparse, ctypes, ctypes.util, json, os, sys, time

OPENMP_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def openblas_core():
    for name in ("libopenblas.so.0", ctypes.util.find_library("openblas") or ""):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return None


def reexec_for_blas():
    if os.environ.get("TORCH_SERVING_BLAS") == "keep":
        return
    again = False
    if os.path.isdir(OPENMP_BLAS_DIR) and not os.environ.get("LD_LIBRARY_PATH", "").startswith(OPENMP_BLAS_DIR):
        os.environ["LD_LIBRARY_PATH"] = OPENMP_BLAS_DIR + ":" + os.environ.get("LD_LIBRARY_PATH", "")
        again = True
    elif "OPENBLAS_CORETYPE" not in os.environ and openblas_core() in ("Prescott", "Core2", "Nehalem", "Penryn", "Atom"):
        fl = cpu_flags()
        want = ("Cooperlake" if {"avx512f", "avx512_bf16"} <= fl else
                "SkylakeX" if {"avx512f", "avx512bw", "avx512vl"} <= fl else
                "Haswell" if {"avx2", "fma"} <= fl else None)
        if want:
            os.environ["OPENBLAS_CORETYPE"] = want
            again = True
    if again:
        os.execv(sys.executable, [sys.executable] + sys.argv)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--img", type=int, default=224)
    a = p.parse_args()
    if a.batch < 1 or a.iters < 1 or a.threads < 1:
        sys.exit(f"torch_serving.py: --batch {a.batch}, --iters {a.iters}, --threads {a.threads}: each must be at least 1")
    reexec_for_blas()
    import torch
    import timm

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    m = timm.create_model(a.model, pretrained=False, num_classes=1000, img_size=a.img).eval()
    i = torch.arange(a.batch * 3 * a.img * a.img, dtype=torch.float32)
    x = ((i * 7) % 255 / 127 - 1).reshape(a.batch, 3, a.img, a.img)
    with torch.inference_mode():
        for _ in range(3):
            m(x)
        t = []
        for _ in range(a.iters):
            t0 = time.perf_counter()
            m(x)
            t.append(1000 * (time.perf_counter() - t0))
    t.sort()
    med = t[len(t) // 2]
    print(json.dumps({"peer": "pytorch " + torch.__version__, "model": a.model, "batch": a.batch, "threads": a.threads,
                      "median_ms": round(med, 3), "min_ms": round(t[0], 3), "img_per_s": round(1000 * a.batch / med, 2),
                      "blas": openblas_core() or "unknown"}))


if __name__ == "__main__":
    main()
