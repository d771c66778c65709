"""The floor of one execution: `n` round trips of `code` to an ipykernel through jupyter_client.

Starts its own kernel (the kernelspec `python3`), runs `code` once to warm up, then `n` times,
each until the kernel is idle again with its result in, and prints the milliseconds of each as
one JSON list on stdout. Run with the Python that has ipykernel (Debian's /usr/bin/python3 here).
"""
import json
import sys
import time

from jupyter_client.manager import start_new_kernel


def main() -> None:
    code = sys.argv[1]
    n = int(sys.argv[2])
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(code, timeout=60, output_hook=lambda message: None)
        samples = []
        for _ in range(n):
            start = time.perf_counter()
            reply = client.execute_interactive(code, timeout=60, output_hook=lambda message: None)
            samples.append((time.perf_counter() - start) * 1000)
            if reply["content"]["status"] != "ok":
                raise SystemExit(f"the kernel answered {reply['content']['status']}")
        print(json.dumps(samples))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
