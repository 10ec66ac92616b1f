# Ferromotion: `make lab` and `make test` are the two commands a newcomer needs; each one
# installs whatever is missing first (scripts/bootstrap.sh). The recipes live in scripts/.
.DEFAULT_GOAL := help
SHELL := /bin/bash
PORT ?= 8000

.PHONY: help bootstrap wasm py lab site dist dist-test test lint bench bench-check bench-lab bench-lab-phone bench-fit bench-study fuzz mutants engines warp cube-engines quadruped3d clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ printf "  make %-10s %s\n", $$1, $$2 }'

bootstrap: ## install what is missing (apt toolchain, chromium, wasm-bindgen-cli, .venv); fast no-op otherwise
	@scripts/bootstrap.sh

wasm: ## build the wasm32 crate (Debian toolchain) and run wasm-bindgen into web/pkg and target/wasm/node-pkg
	@scripts/wasm.sh

py: ## build the PyO3 extension into .venv (maturin develop --release)
	@scripts/py.sh

lab: ## install the wasm toolchain if missing, build the web lab, serve web/ on 127.0.0.1:PORT (default 8000)
	@scripts/bootstrap.sh lab
	@scripts/wasm.sh
	@PORT=$(PORT) scripts/lab.sh

site: ## the lab as one static folder, dist/site/, to copy to any host under any sub-path
	@scripts/bootstrap.sh lab
	@scripts/wasm.sh
	@scripts/site.sh

dist: ## the wheel (abi3, manylinux2014, lab inside; auditwheel-checked) and the sdist, into dist/
	@scripts/bootstrap.sh lab
	@scripts/wasm.sh
	@scripts/dist.sh

dist-test: ## make dist, then pip-install the wheel in a fresh venv (no Rust on PATH) and drive its lab in Chromium
	@$(MAKE) --no-print-directory dist
	@scripts/bootstrap.sh
	@.venv/bin/python -m pytest tests/test_dist.py -m dist -q

test: ## every test: fmt, clippy, cargo test, wasm + Node golden parity, maturin, pytest
	@scripts/test.sh

lint: ## cargo fmt --check and clippy -D warnings
	@scripts/lint.sh

bench: ## core vs C loop, wasm (Node, Chromium), JAX, NumPy, Python: ns/step, sweeps, route costs, scaling; batched step functions vs one state (docs/bench.md)
	@scripts/bench.sh

bench-check: ## gradient checkers side by side on benches/check_suite.py: false passes, false alarms, refusals, evaluations
	@scripts/bootstrap.sh
	@scripts/bench_env.sh
	@scripts/py.sh > /dev/null
	@.venv-bench/bin/python benches/check_bench.py

bench-lab: ## time the lab in headless Chromium: slider move -> all readouts and plots, p50/p95 (PHONE=1: a cheap phone beside)
	@scripts/wasm.sh
	@.venv/bin/python benches/lab_bench.py $(if $(PHONE),--phone)

bench-lab-phone: ## bench-lab with a cheap phone beside the desktop: 375 x 740, touch, CPU throttled 4x
	@$(MAKE) --no-print-directory bench-lab PHONE=1

bench-fit: ## coverage of fm.fit's 95% intervals, 2000 replicates per design, before and after the calibration (REPLICATES=N, DESIGNS=a,b)
	@scripts/bootstrap.sh
	@scripts/py.sh > /dev/null
	@.venv/bin/python benches/fit_coverage.py --rules before,after --replicates $(or $(REPLICATES),2000) $(if $(DESIGNS),--designs $(DESIGNS))

bench-study: ## fm.study on Dask: a 10,000-point drop and a 24-point quadruped study at 1 and 2 workers, estimate for 100
	@.venv/bin/python benches/study_bench.py

fuzz: ## long fuzz, >= 1e6 cases: core proptest (FUZZ_CASES/property, 200000), Python (FUZZ_PY_CASES/test, 10000), wasm (FUZZ_WASM_CALLS, 300000)
	@scripts/fuzz.sh

mutants: ## cargo-mutants over the physics modules (hours in full; MUTANTS_SHARD=0/8 samples every 8th mutant)
	@scripts/mutants.sh

engines: ## build .venv-engines (MuJoCo, MJX, JAX, Newton/Warp, Drake; ENGINES_TORCH=1 adds PyTorch) for `ferromotion audit --engine`
	@scripts/engines_env.sh

warp: engines ## MuJoCo Warp into .venv-engines (tests/engines/requirements-warp.txt), its kernel cache warmed (cold: 1-7 min), its tests (~2 min)
	@scripts/warp.sh

cube-engines: engines ## the tumbling cube's engines table (MuJoCo, MJX, MuJoCo Warp: installed if missing, Newton, Drake; ~1 h; docs/engines.md); NOISE=1: Warp's noise by setting
	@scripts/warp.sh install
	@.venv-engines/bin/python scripts/cube_engines.py $(if $(NOISE),--noise)

quadruped3d: engines ## dm_control's 3-D quadruped, per touchdown: MJX jacfwd, MuJoCo differences, the black-box driver (37 min on 2 cores at load 6-19; docs/engines.md)
	@.venv-engines/bin/python -m ferromotion.engines.quadruped3d --out target/quadruped3d.json

clean: ## remove build outputs (target/, web/pkg/, the built extension, caches); keeps .venv
	cargo clean
	rm -rf web/pkg dist python/ferromotion/lab .pytest_cache
	rm -f python/ferromotion/_core*.so
	find . -path ./.venv -prune -o -name __pycache__ -type d -exec rm -rf {} +
