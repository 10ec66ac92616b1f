"""The lab's "Script it in Python" panel (issue 16 part 3): pyodide, vendored and served from the
lab's origin, runs `import ferromotion as fm` on the lab's WebAssembly core.

One page, one pyodide boot for every check (the boot costs seconds). Each number printed in
the panel is compared with the native package in .venv (a second build of the same core, a
second binding, a second language runtime), to the last digit of Python's repr. Every request
off 127.0.0.1 is aborted (labkit), so the panel works offline or not at all.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import time

import ferromotion as fm
import pytest
import ferromotion.plot
from labkit import DESKTOP, PHONE, ROOT, SCREENSHOTS, WEB, assert_stayed_local, new_page, open_lab
from playwright.sync_api import Page

RESULTS = ROOT / "python" / "ferromotion" / "_results.py"

BOOT_MS = 120_000  # pyodide on a busy 2-core machine; the measured time is printed, not asserted


def run(page: Page, code: str) -> tuple[str, str]:
    """Run a script in the panel; (stdout text, stderr text)."""
    n = int(page.locator("#python").get_attribute("data-runs") or 0)
    page.locator("#py-code").fill(code)
    page.locator("#py-run").click()
    page.wait_for_function(f"Number(document.getElementById('python').dataset.runs || 0) > {n}", timeout=60_000)
    out = page.eval_on_selector_all("#py-output span:not(.py-err)", "els => els.map(e => e.textContent).join('')")
    err = page.eval_on_selector_all("#py-output span.py-err", "els => els.map(e => e.textContent).join('')")
    return out, err


def printed(page: Page, expr: str) -> object:
    """`repr(expr)` printed in the panel, read back as a Python literal."""
    out, err = run(page, f"import ferromotion as fm\nprint(repr({expr}))")
    assert not err, err
    return ast.literal_eval(out.strip())


# Signatures and fields the browser package must share with the native one.
FUNCTIONS = ["exact", "fixed", "corrected", "flow", "tolerance", "rk4", "blame", "divergence_exponent",
             "time_of_impact_term", "sweep", "check_gradient", "equal_budget"]
DATACLASSES = ["Drop", "Route", "ExponentFit", "Blame"]
SIGNATURES = (
    "import inspect, dataclasses, ferromotion as fm\n"
    f"print(repr({{n: [(p.name, str(p.kind), repr(p.default)) for p in inspect.signature(getattr(fm, n)).parameters.values()] for n in {FUNCTIONS!r}}}))\n"
    f"print(repr({{n: [(f.name, 'MISSING' if f.default is dataclasses.MISSING else repr(f.default)) for f in dataclasses.fields(getattr(fm, n))] for n in {DATACLASSES!r}}}))\n"
    "print(repr(sorted(c.__name__ for c in [fm.FerroError, *fm.FerroError.__subclasses__()])))\n"
    "print(repr(sorted(n for n in vars(fm.sweep(fm.Drop(), [1e5, 1e6]).fixed))))\n"
)


def native_signatures() -> list[object]:
    sigs = {n: [(p.name, str(p.kind), repr(p.default)) for p in inspect.signature(getattr(fm, n)).parameters.values()]
            for n in FUNCTIONS}
    fields = {n: [(f.name, "MISSING" if f.default is dataclasses.MISSING else repr(f.default))
                  for f in dataclasses.fields(getattr(fm, n))] for n in DATACLASSES}
    errors = sorted(c.__name__ for c in [fm.FerroError, *fm.FerroError.__subclasses__()])
    columns = sorted(n for n in vars(fm.sweep(fm.Drop(), [1e5, 1e6]).fixed))
    return [sigs, fields, errors, columns]


def test_python_panel(browser, lab):  # noqa: F811
    page = new_page(browser, lab, DESKTOP)
    try:
        open_lab(page, lab)
        page.wait_for_timeout(500)
        before = list(page.requests)
        assert not [u for u in before if "/pyodide/" in u or "/py/" in u], "pyodide was loaded before the panel opened"

        # Open the panel: pyodide boots, with a visible progress line.
        t0 = time.monotonic()
        page.locator("#python > summary").click()
        assert page.locator("#py-progress").is_visible()
        page.wait_for_function("document.getElementById('python').dataset.ready === 'true'", timeout=BOOT_MS)
        wall = time.monotonic() - t0
        print(f"\npanel: open -> ready {wall:.1f} s (pyodide's own count {page.evaluate('window.__pyodideReadySeconds'):.1f} s)")
        assert any(u.endswith("/pyodide/pyodide.asm.wasm") for u in page.requests)

        # The number, to the last digit.
        j10 = printed(page, "fm.fixed(fm.Drop(), k=1e6, dt=1e-4).jacobian[1][0]")
        assert j10 == float(fm.fixed(fm.Drop(), k=1e6, dt=1e-4).jacobian[1, 0])
        assert repr(j10) == repr(float(fm.fixed(fm.Drop(), k=1e6, dt=1e-4).jacobian[1, 0]))

        # Every route's whole answer, digit for digit, but for the wall time of the call
        # (measured on each side with its own clock; compared below by presence only).
        def untimed(answer):
            return {key: value for key, value in answer.items() if key not in ("wall_s", "wall_resolution_s")}

        d = fm.Drop(height=0.8, velocity=-0.5)
        drop = "fm.Drop(height=0.8, velocity=-0.5)"
        for expr, native in [
            (f"fm.exact({drop}).to_dict()", fm.exact(d)),
            (f"fm.fixed({drop}, 1e5, 1e-4).to_dict()", fm.fixed(d, 1e5, 1e-4)),
            (f"fm.corrected({drop}, 1e5, 1e-4).to_dict()", fm.corrected(d, 1e5, 1e-4)),
            (f"fm.flow({drop}, 1e5).to_dict()", fm.flow(d, 1e5)),
            (f"fm.tolerance({drop}, 1e5, rtol=1e-5, events=True).to_dict()", fm.tolerance(d, 1e5, rtol=1e-5, events=True)),
            (f"fm.rk4({drop}, 1e5, 1e-4).to_dict()", fm.rk4(d, 1e5, 1e-4)),
        ]:
            assert untimed(printed(page, expr)) == untimed(native.to_dict()), expr
        # The equal-budget table: the same document in the page, each row timed there.
        in_page = printed(page, f"fm.equal_budget({drop}, k=1e5, budget=8000).to_dict()")
        native = fm.equal_budget(d, k=1e5, budget=8000).to_dict()
        # It prints as the native one does: one short line, and the table on request.
        assert printed(page, f"repr(fm.equal_budget({drop}, k=1e5, budget=8000)).split(':')[0]") == repr(
            fm.equal_budget(d, k=1e5, budget=8000)).split(":")[0]
        assert printed(page, f"fm.equal_budget({drop}, k=1e5, budget=8000).format_table().splitlines()[-1]") == (
            fm.equal_budget(d, k=1e5, budget=8000).format_table().splitlines()[-1])
        assert [untimed(r) for r in in_page.pop("rows")] == [untimed(r) for r in native.pop("rows")]
        assert untimed(in_page) == untimed(native)
        assert in_page["wall_resolution_s"] > 0 and native["wall_resolution_s"] > 0
        assert printed(page, f"fm.blame({drop}, 1e6, 1e-4).to_dict()") == fm.blame(d, 1e6, 1e-4).to_dict()
        assert printed(page, "fm.divergence_exponent(fm.Drop()).to_dict()") == fm.divergence_exponent(fm.Drop()).to_dict()
        assert printed(page, "fm.time_of_impact_term(fm.Drop(), [4.0, 0.01])") == \
            [float(x) for x in fm.time_of_impact_term(fm.Drop(), [4.0, 0.01])]

        # A 9-point sweep: its columns and fit match native; it plots with the lab's LogPlot.
        ks = fm.log_grid(4, 8, 2)
        assert len(ks) == 9
        s = fm.sweep(fm.Drop(), k=ks, dt=1e-4, corrected=True, blame=True)
        got = printed(page, "(lambda s: (s.k, s.gradient_error, s.forward_unit, s.right_sign, s.corrected.dv_dy0, "
                            "s.blame.ratio, s.exponent().to_dict()))"
                            "(fm.sweep(fm.Drop(), k=fm.log_grid(4, 8, 2), dt=1e-4, corrected=True, blame=True))")
        assert got == (s.k.tolist(), s.gradient_error.tolist(), list(s.forward_unit), s.right_sign.tolist(),
                       s.corrected.dv_dy0.tolist(), s.blame.ratio.tolist(), s.exponent().to_dict())
        out, err = run(page, "import ferromotion as fm\ns = fm.sweep(fm.Drop(), k=fm.log_grid(4, 8, 2), dt=1e-4)\n"
                             "s.plot(mark_k=1e6)\nprint(len(s))")
        assert not err and out.strip() == "9"
        plot = page.locator("#py-plot")
        assert plot.is_visible()
        # Two panels, as the lab's own error plot: a unitless error never shares an axis with metres.
        gradient, forward = page.locator("#py-plot-gradient svg"), page.locator("#py-plot-forward svg")
        assert gradient.locator("polyline.series").count() == 1
        assert forward.locator("polyline.series").count() == 1
        assert gradient.locator(".axis-label").last.text_content() == "relative gradient error"
        assert forward.locator(".axis-label").last.text_content() == "|dy| at T (m)"
        # The core's one wrong-sign band (8 of the 9 points), shaded in both panels.
        assert len(fm.plot.wrong_sign_spans(s.k, s.right_sign)) == 1
        assert gradient.locator("rect.band").count() == 1 and forward.locator("rect.band").count() == 1
        assert not all(s.right_sign) and s.right_sign.sum() == 1
        assert int(gradient.get_attribute("width")) > 200
        # The next run starts without the last run's plot.
        out, err = run(page, "print(1)")
        assert out.strip() == "1" and not err
        assert not plot.is_visible()
        # An error names the learner's own line with its source, and no line of the panel's runner.
        out, err = run(page, "import ferromotion as fm\nfm.fixed(fm.Drop(), k=-1.0)\n")
        lines = err.rstrip().splitlines()
        assert lines[0] == "  line 2: fm.fixed(fm.Drop(), k=-1.0)", err
        assert len(lines) == 2 and lines[1].startswith("InvalidParameter:"), err

        # One presentation: the result classes are the native package's own file, so their
        # reprs print the same digits.
        assert (WEB / "py" / "ferromotion" / "_results.py").read_text() == RESULTS.read_text(), (
            "web/py/ferromotion/_results.py is stale: run scripts/pyodide.sh")
        for expr, native in [
            ("fm.fixed(fm.Drop(), 1e6, 1e-4)", fm.fixed(fm.Drop(), 1e6, 1e-4)),
            ("fm.tolerance(fm.Drop(), 1e6, rtol=1e-6, events=True)", fm.tolerance(fm.Drop(), 1e6, rtol=1e-6, events=True)),
            ("fm.rk4(fm.Drop(), 1e10, 1e-4)", fm.rk4(fm.Drop(), 1e10, 1e-4)),
            ("fm.blame(fm.Drop(), 1e6, 1e-4)", fm.blame(fm.Drop(), 1e6, 1e-4)),
            ("fm.divergence_exponent(fm.Drop())", fm.divergence_exponent(fm.Drop())),
            ("fm.sweep(fm.Drop(), k=fm.log_grid(4, 8, 2), dt=1e-4, corrected=True)",
             fm.sweep(fm.Drop(), k=ks, dt=1e-4, corrected=True)),
            ("fm.sweep(fm.Drop(), k=fm.log_grid(4, 8, 2)).fixed", s.fixed),
        ]:
            assert printed(page, f"repr({expr})") == repr(native), expr
        assert printed(page, "type(fm.fixed(fm.Drop(), 1e6).jacobian).__name__") == "list"  # no numpy here
        # Every single route carries the wall time of its call, timed in the page by the
        # core with performance.now() (so only its presence and the clock's tick compare).
        walls = printed(page, "[(lambda r: (r.wall_s >= 0, r.wall_resolution_s > 0))(f(fm.Drop(), 1e6)) "
                              "for f in (fm.fixed, fm.corrected, fm.flow, fm.rk4)]")
        assert walls == [(True, True)] * 4

        # The tolerance route's gradient method reaches the wasm sweep (issue 13): the native
        # rows; the wall times are measured in the page, so only their presence is compared.
        f = fm.sweep(fm.Drop(), k=[1e6], tolerance=1e-6, events=True, jacobian="forward")
        got = printed(page, "(lambda s: (s.tolerance.jacobian[0], s.tolerance.force_evals, s.tolerance.rollouts, "
                            "s.tolerance.wall_s[0] >= 0, s.to_dict()['tolerance']))"
                            "(fm.sweep(fm.Drop(), k=[1e6], tolerance=1e-6, events=True, jacobian='forward'))")
        assert got == (f.tolerance.jacobian[0].tolist(), f.tolerance.force_evals.tolist(),
                       f.tolerance.rollouts.tolist(), True, f.to_dict()["tolerance"])

        # Errors: the same FerroError subclasses with the same messages.
        for expr, call in [
            ("fm.Drop(height=100.0)", lambda: fm.Drop(height=100.0)),
            ("fm.fixed(fm.Drop(), k=1e6, dt=3e-4)", lambda: fm.fixed(fm.Drop(), k=1e6, dt=3e-4)),
            ("fm.fixed(fm.Drop(), k=-1.0)", lambda: fm.fixed(fm.Drop(), k=-1.0)),
            ("fm.time_of_impact_term(fm.Drop(), -1.0)", lambda: fm.time_of_impact_term(fm.Drop(), -1.0)),
            ("fm.sweep(fm.Drop(), [1e6], tolerance=1e-6, jacobian='forward')",
             lambda: fm.sweep(fm.Drop(), [1e6], tolerance=1e-6, jacobian="forward")),
        ]:
            with pytest.raises(fm.FerroError) as native:
                call()
            code = ("import ferromotion as fm\ntry:\n    " + expr + "\nexcept fm.FerroError as e:\n"
                    "    print(repr((type(e).__name__, [c.__name__ for c in type(e).__mro__], str(e))))\n")
            out, err = run(page, code)
            assert not err, err
            name, mro, message = ast.literal_eval(out.strip())
            assert (name, message) == (type(native.value).__name__, str(native.value)), expr
            assert mro[:2] == [c.__name__ for c in type(native.value).__mro__][:2]

        # check_gradient: the core's check on a Python objective (products only: no libm in f).
        poly = ("def f(x):\n    return x[0] * x[0] * x[0] * x[1] + 2.0 * x[1] * x[1]\n"
                "right = [3 * 0.3 * 0.3 * 2.0, 0.3 * 0.3 * 0.3 + 8.0]\n")
        ns: dict = {}
        exec(poly, ns)
        native_r = fm.check_gradient(ns["f"], ns["right"], [0.3, 2.0], objective="poly")
        native_w = fm.check_gradient(ns["f"], [ns["right"][0], 0.0], [0.3, 2.0], objective="poly")
        out, err = run(page, "import ferromotion as fm\n" + poly +
                       "r = fm.check_gradient(f, right, [0.3, 2.0], objective='poly')\n"
                       "w = fm.check_gradient(f, [right[0], 0.0], [0.3, 2.0], objective='poly')\n"
                       "print(repr((r.verdict, r.to_dict()['report'], w.verdict, w.to_dict()['report'], r.summary())))\n"
                       "def bad(x):\n    raise ZeroDivisionError('mine')\n"
                       "try:\n    fm.check_gradient(bad, [1.0], [0.0])\nexcept ZeroDivisionError as e:\n"
                       "    print(repr(('raised', str(e))))\n")
        assert not err, err
        lines = out.strip().splitlines()
        assert ast.literal_eval(lines[0]) == (native_r.verdict, native_r.to_dict()["report"], native_w.verdict,
                                              native_w.to_dict()["report"], native_r.summary())
        assert native_r.verdict == "verified" and native_w.verdict == "not-verified"
        assert ast.literal_eval(lines[1]) == ("raised", "mine")

        # The browser package's small differences from the native one, closed: no typing
        # helpers in dir(fm), a str for a number refused as natively, native-only names said so.
        leaked = printed(page, "sorted(set(dir(fm)) & {'Any', 'Dict', 'List', 'Optional', 'Union', 'annotations', "
                               "'dataclasses', 'floats', 'frozen', 'tolerance_rtol'})")
        assert leaked == sorted(set(dir(fm)) & {"Any", "Dict", "List", "Optional", "Union", "dataclasses", "floats",
                                                "frozen", "tolerance_rtol"}), leaked
        # Nor the package's plumbing: every public name in the browser is one the native package has.
        public = printed(page, "sorted(n for n in dir(fm) if not n.startswith('_'))")
        assert set(public) <= set(dir(fm)), sorted(set(public) - set(dir(fm)))
        with pytest.raises(TypeError) as native_type:
            fm.fixed(fm.Drop(), k="1e6")
        out, err = run(page, "import ferromotion as fm\ntry:\n    fm.fixed(fm.Drop(), k='1e6')\n"
                             "except TypeError as e:\n    print(repr(str(e)))\n"
                             "try:\n    fm.descent\nexcept AttributeError as e:\n    print(repr(str(e)))\n")
        assert not err, err
        type_message, native_only = (ast.literal_eval(x) for x in out.strip().splitlines())
        assert type_message == str(native_type.value)
        assert "fm.descent is native only" in native_only and hasattr(fm, "descent")

        # One public API: names, argument kinds, defaults, fields, error classes, sweep columns.
        out, err = run(page, SIGNATURES)
        assert not err, err
        assert [ast.literal_eval(line) for line in out.strip().splitlines()] == native_signatures()

        # The notebook's opening exercises run as shipped, without an error.
        count = page.locator("#py-exercise option").count()
        assert count >= 3
        for i in range(count):
            page.locator("#py-exercise").select_option(str(i))
            n = int(page.locator("#python").get_attribute("data-runs") or 0)
            page.locator("#py-run").click()
            page.wait_for_function(f"Number(document.getElementById('python').dataset.runs) > {n}", timeout=60_000)
            assert page.locator("#py-output span.py-err").count() == 0, page.locator("#py-output").inner_text()
            assert page.locator("#py-output").inner_text().strip()

        assert_stayed_local(page, lab)
        assert not page.console_errors, page.console_errors

        # Screenshots of the open panel, desktop and phone (looked at by a person).
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#python").scroll_into_view_if_needed()
        page.locator("#python").screenshot(path=str(SCREENSHOTS / "python-panel-1280.png"))
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(300)
        page.locator("#python").scroll_into_view_if_needed()
        page.locator("#python").screenshot(path=str(SCREENSHOTS / "python-panel-375.png"))
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the page scrolls sideways at 375 px ({width} px wide)"
    finally:
        page.context.close()
