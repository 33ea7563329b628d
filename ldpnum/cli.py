"""Command line of ldpnum: ``ldpnum privatize``, ``estimate``, ``heavy-hitters``, ``keys generate`` and ``demo``.

This module parses arguments and prints; the file machinery (streaming a file through the collection layer, the
records, spec, key and ledger files) is :mod:`ldpnum.io`, the rules and estimates are :mod:`ldpnum.collect`'s, and
the mechanisms named by the flags are built and checked in ``ldpnum._cli_mechanisms``.
``ldpnum --help`` lists the commands and ``ldpnum COMMAND --help`` each command's options; the manual (what the
commands do with the files, the randomness and the budget) is the project's ``docs/cli.md``. A mistake in the
command line or its files prints one line ``ldpnum: error: ...`` and exits with status 2 (``LDPNUM_DEBUG=1``
shows the traceback instead).

Examples
--------
::

    $ ldpnum privatize flights.csv reports.parquet --column dep_time --mechanism sw --epsilon 1 --bounds 0 1440
    $ ldpnum estimate reports.parquet --column dep_time --what mean quantiles --plot dep_time.png
"""

import argparse
import json
import math
import os
import sys
import time

from .base import mechanism_spellings
from .collect import QUERIES, STRATEGIES, MarginalQueryError, answer_queries, marginal_lines, plan_columns
from .io import (
    DEFAULT_BATCH_SIZE,
    CLIError,
    aggregate_file,
    check_estimate_request,
    check_file_keys,
    check_file_shuffle,
    check_shuffle_declaration,
    generate_keys_file,
    heavy_hitters_file,
    is_user_error,
    keys_for_rows,
    ledger_check,
    one_line,
    open_ledger,
    privatize_file,
    read_key,
    record_file_ledger,
    report_column,
    require_pyarrow,
    terminate_as_interrupt,
    write_plot,
    write_spec_file,
)
from ._results import ESTIMATE_METHODS, thaw
from .estimation.distribution import METHODS as DISTRIBUTION_METHODS
from ._cli_mechanisms import (
    category_column_mechanisms,
    cli_mechanisms,
    explicit_spec,
    heavy_classes,
    heavy_mechanism,
    make_mechanism,
    multi_column_mechanisms,
    oracle_class,
    parse_params,
    per_column,
    mechanism_class,
    spec_column_mechanisms,
)

__all__ = ["MECHANISM_ALIASES",  # noqa: F822 (provided by the module __getattr__ below)
           "aggregate_file", "heavy_hitters_file", "main", "main_exit", "make_mechanism", "privatize_file"]

#: Categories printed by ``--what frequencies`` (``--json`` gives all).
MAX_PRINTED_CATEGORIES = 64

#: The demos ``ldpnum demo`` runs besides the default flights demo.
DEMOS = ("heavy-hitters", "vectors", "telemetry")

#: What ``ldpnum estimate`` can estimate.
WHATS = QUERIES

# -- mechanisms --------------------------------------------------------------------------------------------

def __getattr__(attr):
    # MECHANISM_ALIASES is read from the registry when first asked for, so `import ldpnum.cli` stays light.
    if attr == "MECHANISM_ALIASES":
        return mechanism_spellings(cli_mechanisms())
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


# -- estimate ----------------------------------------------------------------------------------------------

def _parse_candidates(text, mech):
    """``--candidates a,b,c`` or ``@FILE`` (one item per line) as the mechanism's items (ints for ``uint``)."""
    if text is None:
        return None
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as exc:
            raise CLIError(f"--candidates {text}: cannot read the file ({exc.strerror or exc})") from None
        items = [line.strip() for line in lines if line.strip()]
    else:
        items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise CLIError(f"--candidates {text!r}: no items")
    kind = getattr(mech, "item_type", "str")
    if kind == "uint":
        bad = [v for v in items if not v.isdigit()]
        if bad:
            raise CLIError(f"--candidates: {mech.spec.mechanism} items are unsigned integers; got {bad[0]!r}")
        return [int(v) for v in items]
    return [v.encode("utf-8") for v in items] if kind == "bytes" else items


def _parse_range(tokens):
    """``--range`` as ``(lo, hi)`` (two numbers) or ``{column: (lo, hi)}`` (``COL:LO:HI`` tokens)."""
    def number(text):
        try:
            v = float(text)
        except ValueError:
            raise CLIError(f"--range: {text!r} is not a number") from None
        if not math.isfinite(v):
            raise CLIError(f"--range needs finite bounds; got {text!r}")
        return v

    if all(":" not in t for t in tokens):
        if len(tokens) != 2:
            raise CLIError(f"--range takes LO HI (two numbers) or COL:LO:HI per column; got {' '.join(tokens)!r}")
        lo, hi = number(tokens[0]), number(tokens[1])
        if lo > hi:
            raise CLIError(f"--range needs LO <= HI; got {lo:g} {hi:g}")
        return lo, hi
    query = {}
    for t in tokens:
        parts = t.rsplit(":", 2)
        if len(parts) != 3 or not parts[0]:
            raise CLIError(f"--range: {t!r} is not COL:LO:HI")
        col, lo, hi = parts[0], number(parts[1]), number(parts[2])
        if col in query:
            raise CLIError(f"--range names column {col!r} twice")
        if lo > hi:
            raise CLIError(f"--range {t!r}: LO must not exceed HI")
        query[col] = (lo, hi)
    return query


def _g(v):
    return f"{v:.6g}"


def _print_estimates(out, head, file):
    print(head, file=file)
    if "mean" in out and "coordinates" in out["mean"]:
        m = out["mean"]
        print(f"mean (unbiased), per coordinate ({100 * m['level']:g}% CI, one coordinate at a time):", file=file)
        for e in m["coordinates"]:
            lo, hi = e["ci"]
            print(f"  [{e['coordinate']}] {_g(e['value'])} ± {(hi - lo) / 2:.3g} (CI [{_g(lo)}, {_g(hi)}]; standard "
                  f"error {e['standard_error']:.3g})", file=file)
    elif "mean" in out:
        m = out["mean"]
        if m["method"] == "mle":
            lo, hi = m["ci"]
            print(f"mean (maximum likelihood): {_g(m['value'])} ({100 * m['level']:g}% likelihood-ratio CI "
                  f"[{_g(lo)}, {_g(hi)}]; standard error at the estimate {m['standard_error']:.3g})", file=file)
        elif m["unbiased"]:
            lo, hi = m["ci"]
            z = (hi - lo) / 2
            print(f"mean (unbiased): {_g(m['value'])} ± {z:.3g} ({100 * m['level']:g}% CI [{_g(lo)}, {_g(hi)}]; "
                  f"standard error {m['standard_error']:.3g})", file=file)
        else:
            print(f"mean: {_g(m['value'])} (mean of the estimated distribution; no standard error)", file=file)
    if "quantiles" in out:
        q = out["quantiles"]
        cis = [f"[{_g(lo)}, {_g(hi)}]" for lo, hi in q["ci"]] if "ci" in q else [""] * len(q["q"])
        print(f"{'quantile':>10}  {'value':>12}  " + (f"{100 * q['level']:g}% CI" if "ci" in q else ""), file=file)
        for p, v, ci in zip(q["q"], q["value"], cis):
            print(f"{p:>10g}  {_g(v):>12}  {ci}", file=file)
    if "range" in out:
        r = out["range"]
        where = (" and ".join(f"{_g(lo)} <= {c} <= {_g(hi)}" for c, (lo, hi) in r["query"].items()) if "query" in r
                 else f"{_g(r['low'])} <= X <= {_g(r['high'])}")
        ci = (f"; {100 * r['level']:g}% bootstrap CI [{r['ci'][0]:.4f}, {r['ci'][1]:.4f}]" if "ci" in r else "")
        print(f"P({where}) = {r['mass']:.4f} (about {r['count']:,.0f} of {r['n_reports']:,} values{ci})", file=file)
    if "marginals" in out:
        print("\n".join(marginal_lines(out["marginals"])), file=file)
    if "frequencies" in out:
        f = out["frequencies"]
        k = len(f["frequency"])
        shown = range(min(k, MAX_PRINTED_CATEGORIES))
        if f["method"] == "mle":
            print(f"frequencies (maximum likelihood; {100 * f['level']:g}% profile-likelihood CI):", file=file)
            print(f"{'category':>10}  {'frequency':>10}  {'CI':>17}  {'people':>12}", file=file)
        else:
            print(f"frequencies ({f['postprocess']}; ± {100 * f['level']:g}% CI half-width from the unbiased "
                  "estimate):", file=file)
            print(f"{'category':>10}  {'frequency':>10}  {'±':>8}  {'people':>12}", file=file)
        for i in shown:
            lo, hi = f["ci_low"][i], f["ci_high"][i]
            ci = f"[{lo:.4f}, {hi:.4f}]" if f["method"] == "mle" else f"{(hi - lo) / 2:>8.4f}"
            print(f"{f['category'][i]!s:>10}  {f['frequency'][i]:>10.4f}  {ci}  {f['count'][i]:>12,.0f}",
                  file=file)
        if k > len(shown):
            print(f"  ... {k - len(shown)} more categories (--json prints all {k})", file=file)
    if "distribution" in out:
        d = out["distribution"]
        conv = "converged" if d["converged"] else "NOT converged"
        print(f"distribution: {d['n_bins']} bins, {d['method']}"
              + (f", {d['n_iter']} iterations, {conv}" if d["n_iter"] else ""), file=file)
        print(f"  mean of the estimated distribution {_g(d['mean'])} (biased by the reconstruction; for the mean "
              f"itself use --what mean), standard deviation {_g(d['std'])}", file=file)
        print("  quantiles: " + ", ".join(f"{p:g}: {_g(v)}" for p, v in zip(d["quantiles"]["q"],
                                                                            d["quantiles"]["value"])), file=file)
        edges, probs = d["bin_edges"], d["probabilities"]
        n_rows = min(10, len(probs))
        groups = [len(probs) * i // n_rows for i in range(n_rows + 1)]
        masses = [math.fsum(probs[a:b]) for a, b in zip(groups[:-1], groups[1:])]
        top = max(masses) or 1.0
        print(f"  {'from':>12}  {'to':>12}  {'mass':>7}", file=file)
        for (a, b), mass in zip(zip(groups[:-1], groups[1:]), masses):
            bar = "#" * round(40 * mass / top)
            print(f"  {_g(edges[a]):>12}  {_g(edges[b]):>12}  {mass:7.4f}  {bar}", file=file)


def _open_ledger(args, mechanisms):
    """``(ledger, people)`` for ``privatize --ledger``, after checking the cap (nothing is drawn before).

    ``(None, None)`` without a ledger.
    """
    if args.ledger is None:
        for flag, value in (("--people-column", args.people_column if args.keys is None else None),
                            ("--ledger-cap", args.ledger_cap), ("--label", args.label)):
            if value is not None:
                raise CLIError(f"{flag} goes with --ledger FILE")
        return None, None
    if args.people_column is None:
        raise CLIError("--ledger needs --people-column C: the column of each row's person id")
    plan = plan_columns(mechanisms, args.strategy)  # memoized columns: checked per value before drawing
    return open_ledger(args.ledger, args.ledger_cap, args.input, args.people_column, args.delimiter,
                       None if plan.memoized else plan.epsilon_per_row)


def _longitudinal_line(mech, round_id):
    """What one round of a longitudinal column spends: ε1 per report, ε∞ per memoized value."""
    where = "no round" if round_id is None else f"round {round_id}"
    return (f"longitudinal ({where}): epsilon {mech.epsilon_report:g} per report (eps_1), at most "
            f"{mech.epsilon_permanent:g} per memoized value over all rounds (eps_inf); a ledger charges each "
            "person min(eps_inf, reports x eps_1) per value")


def _check_shuffle_declaration(args, agg):
    """Refuse reports whose shuffle declaration differs from the deployed one (``--expect-spec``).

    Otherwise say that it was not checked.
    """
    found = check_shuffle_declaration(args.reports, agg, getattr(args, "expect_spec", None))
    if found is not None:
        print(f"ldpnum: note: the shuffle declaration (central delta {found:g}) was read from the file and not "
              "checked: the central epsilon shown holds only if the reports were shuffled as declared; state the "
              "deployment with --expect-spec FILE (written by privatize --write-spec, which records it)",
              file=sys.stderr)


# -- heavy hitters -----------------------------------------------------------------------------------------

def _json_item(item):
    return item.hex() if isinstance(item, bytes) else item


def _print_heavy(est, args, info, file):
    from .heavy import item_label

    spec = est.spec
    mode = (f"a seeded simulation (rng={args.rng}): anyone with the seed can undo the noise"
            if args.rng is not None else "secure randomness")
    print(f"{args.column}: {est.n_reports:,} reports; {spec}", file=file)
    print(f"one-round {args.method} simulation at epsilon = {spec.epsilon:g}, {mode}", file=file)
    ci = est.confidence_interval(args.level)
    counts = est.counts
    width = max([len("item")] + [len(item_label(v, one_line=True)) for v in est.items])
    print(f"{'rank':>4}  {'item':<{width}}  {'share':>8}  {'±':>8}  {'count':>12}", file=file)
    for r, item in enumerate(est.items):
        half = (ci.high[r] - ci.low[r]) / 2
        label = item_label(item, one_line=True)
        print(f"{r + 1:>4}  {label:<{width}}  {est.frequencies[r]:>8.4f}  {half:>8.4f}  {counts[r]:>12,.0f}",
              file=file)
    print(f"(share: estimated fraction of the {est.n_reports:,} people; ± half-width of the {100 * args.level:g}% "
          "CI)", file=file)


def _cmd_heavy_hitters(args):
    require_pyarrow()
    mech = heavy_mechanism(args)
    delimiter = None if args.delimiter is None else args.delimiter.replace("\\t", "\t")
    est, info = heavy_hitters_file(args.input, args.column, mech, rng=args.rng, batch_size=args.batch_size,
                                   delimiter=delimiter, progress=args.progress)
    if info["truncated"]:
        nbytes = mech.item_bits // 8
        print(f"ldpnum: warning: column {args.column!r}: {info['truncated']:,} item(s) longer than {nbytes} bytes "
              f"(--item-bits {mech.item_bits}) were truncated to their first {nbytes} bytes, first at row "
              f"{info['first_truncated']}; they are counted with every item sharing that prefix", file=sys.stderr)
    if args.json:
        ci = est.confidence_interval(args.level)
        doc = {"column": args.column, "method": args.method, "spec": est.spec.to_dict(),
               "n_reports": est.n_reports, "item_type": mech.item_type,
               "items": [_json_item(v) for v in est.items],
               "frequencies": est.frequencies.tolist(), "counts": est.counts.tolist(),
               "standard_errors": est.standard_errors.tolist(),
               "ci": {"level": args.level, "low": ci.low.tolist(), "high": ci.high.tolist()},
               "provenance": thaw(est.provenance), "n_truncated": info["truncated"],
               "simulation": args.rng is not None, "rng": args.rng}
        if mech.item_type == "bytes":
            doc["item_encoding"] = "hex"
        print(json.dumps(doc))
    else:
        _print_heavy(est, args, info, sys.stdout)
    return 0


# -- argument parsing --------------------------------------------------------------------------------------

def _argument(convert, what, ok, requirement):
    """An argparse ``type``: ``convert(text)`` (e.g. int, float), rejected unless ``ok(value)``.

    Malformed text reads ``invalid WHAT: 'text'``; a value failing ``ok`` reads ``REQUIREMENT; got value``.
    """
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {what}: {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{requirement}; got {value}")
        return value

    parse.__name__ = what  # argparse names the type in some messages
    return parse


def _whole_number(text):
    """An integer written plainly (``1000000``, ``1_000_000``) or as a whole float (``1e6``)."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
        if not value.is_integer():  # also inf and nan
            raise ValueError(text) from None
        return int(value)


_positive_int = _argument(int, "positive integer", lambda v: v >= 1, "must be a positive integer")
_people = _argument(_whole_number, "number of people", lambda v: v >= 1, "must be a positive integer")
_seed = _argument(int, "seed (a non-negative integer)", lambda v: v >= 0, "a seed must be a non-negative integer")
_round = _argument(int, "round (a non-negative integer)", lambda v: v >= 0, "a round is a non-negative integer")
_level = _argument(float, "level", lambda v: 0 < v < 1, "a confidence level is in (0, 1)")
_probability = _argument(float, "probability", lambda v: 0 <= v <= 1, "quantile levels are in [0, 1]")


def _parser():
    from .demo import PLOT_PATH as DEMO_PLOT_PATH

    parser = argparse.ArgumentParser(
        prog="ldpnum", description="Numerical data under local differential privacy.",
        epilog="Run `ldpnum COMMAND --help` for a command's options.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    aliases = ", ".join(full + (f" ({'/'.join(cls.aliases)})" if cls.aliases else "")
                        for full, cls in cli_mechanisms().items())
    p = sub.add_parser(
        "privatize", help="randomize numerical columns of a CSV/Parquet file into a Parquet file of reports",
        description="Randomize every value of the given columns with an LDP mechanism, streaming the input in "
                    "batches, and write the report codes to Parquet with the mechanism's spec in the file's "
                    "metadata. By default each row reports every privatized column, so it spends the sum of their "
                    "epsilons (see --strategy).",
        epilog=f"Mechanisms (short names in parentheses; class names such as SquareWave work too): {aliases}. "
               "Other input columns are not copied unless named with --keep.")
    p.add_argument("input", metavar="IN", help="input file: .csv/.tsv (optionally .gz, .bz2, .zst) or .parquet/.pq")
    p.add_argument("output", metavar="OUT", help="output Parquet file (.parquet or .pq)")
    p.add_argument("--column", "-c", action="append", default=[], metavar="C",
                   help="a numerical column to privatize (repeat for several)")
    p.add_argument("--mechanism", "-m", action="append", default=[], metavar="NAME",
                   help="mechanism: once for every column, or once per --column in order")
    p.add_argument("--epsilon", "-e", action="append", type=float, default=[], metavar="EPS",
                   help="privacy parameter of each report, in (0, 20]: once, or once per --column")
    p.add_argument("--bounds", "-b", action="append", nargs=2, type=float, default=[], metavar=("LO", "HI"),
                   help="public range of the values (never taken from the data): once, or once per --column")
    p.add_argument("--categories", action="append", default=[], metavar="A,B,...",
                   help="the declared, public categories of a --column whose --mechanism is a frequency oracle "
                        "(grr, olh, ...), comma-separated, code i being the i-th (never read off the data: which "
                        "values occur would leak); once per such column, in order; those columns take no --bounds. "
                        "The reports' spec records them, so estimates are labelled")
    p.add_argument("--columns", action="append", default=[], metavar="C1,C2,...",
                   help="several value columns privatized together into one report column 'C1,C2,...' by the "
                        "mechanism of the matching --spec (HDG, Marginals, a vector mechanism); repeat for "
                        "several, each with its own --spec")
    p.add_argument("--spec", action="append", default=[], metavar="JSON|@FILE",
                   help="the mechanism of each --columns, in order: a spec as JSON (Spec.to_dict(), e.g. "
                        "json.dumps(ldp.Marginals(...).spec.to_dict())) or @FILE holding it. Without --mechanism and "
                        "--columns, the mechanism of each --column instead (once, or once per --column in order): "
                        "any mechanism of one column, e.g. a frequency oracle or a longitudinal one "
                        "(json.dumps(ldp.LGRR(epsilon_permanent=2, epsilon_report=1, k=8).spec.to_dict()); a round "
                        "in the spec is ignored: --round sets it)")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="further mechanism parameter, e.g. n_cells=2048, shape=triangle, n_leaves=256 "
                        "(applies to every column)")
    p.add_argument("--strategy", choices=STRATEGIES, default="all-columns",
                   help="all-columns (default): every row reports every column, spending the sum of their "
                        "epsilons; one-column-per-row: each row reports one column chosen at random, with its "
                        "full epsilon (more accurate for several columns), the other cells are left empty")
    p.add_argument("--rng", type=_seed, default=None, metavar="N",
                   help="seed for a reproducible SIMULATION (anyone with the seed can undo the noise); default: "
                        "secure randomness, for real collections")
    p.add_argument("--nan-fill", type=float, default=None, metavar="VALUE",
                   help="public value imputed for missing values (default: missing values are an error)")
    p.add_argument("--out-of-range", choices=("clip", "raise"), default="clip",
                   help="values outside the bounds are clipped (default, with a warning) or an error")
    p.add_argument("--keep", action="append", default=[], metavar="COL",
                   help="copy input column COL unchanged (NOT privatized: only public columns)")
    p.add_argument("--batch-size", type=_positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"rows per step (default {DEFAULT_BATCH_SIZE}); the output does not depend on it")
    p.add_argument("--delimiter", default=None, metavar="CHAR",
                   help="field delimiter of a CSV input (default ',', tab for .tsv)")
    p.add_argument("--progress", action="store_true", help="show a progress bar (needs tqdm)")
    p.add_argument("--write-spec", default=None, metavar="FILE",
                   help="also write the columns' specs to FILE (JSON), to keep apart from the reports and state "
                        "later with `estimate --expect-spec FILE`")
    p.add_argument("--mac-key-file", default=None, metavar="FILE",
                   help="sign the file's ldpnum record (specs, digests of the codes, budget) with HMAC-SHA256 "
                        "under the secret in FILE (at least 16 bytes)")
    p.add_argument("--ledger", default=None, metavar="FILE",
                   help="privacy ledger (JSON, created if missing): refuse the collection before drawing anything "
                        "if it would take someone's total epsilon above the ledger's cap, else record it "
                        "(needs --people-column)")
    p.add_argument("--people-column", default=None, metavar="C",
                   help="the input column holding each row's person id (int or text), for --ledger, and to match "
                        "a --keys file that names people to the rows")
    p.add_argument("--keys", default=None, metavar="FILE",
                   help="each person's client key (written by `ldpnum keys generate`), for longitudinal (memoized) "
                        "columns: their permanent answers are derived from it, so all of a person's reports of one "
                        "value, in every round, spend at most the mechanism's eps_inf. A key file with person ids is matched to the rows "
                        "by --people-column (a person in several rows uses their one key; a person without a key is "
                        "an error naming them); one without ids is taken row for row (the counts must agree). "
                        "Checked before anything is drawn")
    p.add_argument("--round", type=_round, default=None, metavar="R",
                   help="the round of a longitudinal collection (0, 1, ...), recorded in the memoized columns' "
                        "specs: the reports of two rounds are estimated separately and never merge, and a --ledger "
                        "refuses a round already collected from a person")
    p.add_argument("--ledger-cap", type=float, default=None, metavar="EPS",
                   help="cap on each person's total epsilon, for a new --ledger file")
    p.add_argument("--label", default=None, metavar="TEXT", help="the collection's name in the --ledger")
    p.add_argument("--shuffled", action="store_true",
                   help="declare that the reports reach the analyst anonymized and shuffled together (one batch): "
                        "the file records it, `estimate` shows the central epsilon next to the local one, and the "
                        "--ledger entry shows it too")
    p.add_argument("--shuffle-delta", type=float, default=None, metavar="DELTA",
                   help="the central delta of a --shuffled collection (default 1e-6)")

    e = sub.add_parser(
        "estimate", help="estimate the mean, distribution, quantiles or a range mass from a Parquet report file",
        description="Read the spec of a report column from the Parquet metadata, stream the reports in batches "
                    "into mergeable counts, and estimate once.")
    e.add_argument("reports", metavar="REPORTS", help="Parquet file of reports")
    e.add_argument("--column", "-c", required=True, metavar="C", help="the report column")
    e.add_argument("--what", "-w", nargs="+", choices=WHATS, default=None, metavar="WHAT",
                   help=f"what to estimate, one or more of {', '.join(WHATS)} (default: mean, or distribution for "
                        "hierarchical_histogram, or frequencies for a categorical frequency oracle)")
    e.add_argument("--quantiles", "-q", nargs="+", type=_probability, default=[0.25, 0.5, 0.75], metavar="Q",
                   help="quantile levels for --what quantiles (default 0.25 0.5 0.75)")
    e.add_argument("--marginal", default=None, metavar="C1,C2,...",
                   help="for --what marginals (a Marginals report column): the joint frequencies of these columns "
                        "(default: every released table)")
    e.add_argument("--range", nargs="+", default=None, metavar="LO HI | COL:LO:HI",
                   help="the range of --what range: estimated fraction of values in [LO, HI]; for a report "
                        "column of several value columns (HDG), one COL:LO:HI per column of a 1-D or 2-D query, "
                        "e.g. --range dep_time:360:540 distance:0:1000")
    e.add_argument("--n-bins", type=_positive_int, default=None, metavar="N",
                   help="buckets of the estimated distribution (window mechanisms; default: from n)")
    e.add_argument("--method", choices=DISTRIBUTION_METHODS + ESTIMATE_METHODS, default=None,
                   help="the estimator: of the distribution of window mechanisms, ems-cv (default, the library's: EMS "
                        "with its smoothing chosen by held-out likelihood), ems (Li et al.'s EMS), em or norm-sub; of "
                        "means and frequencies, unbiased (default) or mle (maximum likelihood with likelihood-ratio "
                        "intervals: randomized_response, stochastic_rounding and duchi means, grr frequencies; "
                        "refused for other reports before any is read)")
    e.add_argument("--postprocess", choices=("none", "norm-sub", "simplex", "clip"), default="none",
                   help="frequencies: keep the unbiased estimate (default) or make it a distribution")
    e.add_argument("--candidates", default=None, metavar="ITEM,ITEM,... | @FILE",
                   help="frequencies of reports decoded against a dictionary (rappor, count_mean_sketch): the "
                        "candidate items, comma-separated or one per line of FILE (integers for uint items)")
    e.add_argument("--level", type=_level, default=0.95, help="confidence level of the CIs (default 0.95)")
    e.add_argument("--bootstrap", type=int, default=None, metavar="B", help="--level intervals of the quantiles, "
                   "ranges and marginals from B bootstrap replicates (20 to 100000; 39 or more for 95%%)")
    e.add_argument("--rng", type=int, default=None, metavar="SEED", help="seed of the --bootstrap resampling")
    e.add_argument("--plot", default=None, metavar="PNG", help="write a plot of the estimated distribution")
    e.add_argument("--json", action="store_true", help="print the result as JSON (exact floats)")
    e.add_argument("--expect-spec", default=None, metavar="FILE",
                   help="the spec the collection was deployed with (the file `privatize --write-spec` writes, or "
                        "one spec's JSON): the file's recorded spec must equal it. Without an expected spec the "
                        "file's own record is trusted, and an edited record is not detected")
    e.add_argument("--mac-key-file", default=None, metavar="FILE",
                   help="check the HMAC-SHA256 of the file's ldpnum record under the secret in FILE")
    e.add_argument("--spec", default=None, metavar="JSON",
                   help="expected spec (JSON of Spec.to_dict(), or @FILE): must match the file's, or is used when "
                        "the file records none")
    e.add_argument("--mechanism", "-m", default=None, metavar="NAME", help="expected mechanism (with --epsilon, "
                   "--bounds; like --spec)")
    e.add_argument("--epsilon", "-e", type=float, default=None, metavar="EPS", help="expected epsilon")
    e.add_argument("--bounds", "-b", nargs=2, type=float, default=None, metavar=("LO", "HI"),
                   help="expected bounds")
    e.add_argument("--param", action="append", metavar="KEY=VALUE", help="expected further mechanism parameter")
    e.add_argument("--batch-size", type=_positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"rows read per step (default {DEFAULT_BATCH_SIZE}); memory does not grow with the file")
    e.add_argument("--progress", action="store_true", help="show a progress bar (needs tqdm)")

    h = sub.add_parser(
        "heavy-hitters", help="simulate a one-round heavy-hitter collection (PEM, TreeHist) on a text or id column",
        description="Read one column of a CSV/Parquet file in batches (every value is one person's item), "
                    "randomize each item with PEM or TreeHist, add the batches' aggregates and print the most "
                    "frequent items with their estimated shares. Missing values are an error (never imputed).")
    h.add_argument("input", metavar="IN", help="input file: .csv/.tsv (optionally .gz, .bz2, .zst) or .parquet/.pq")
    h.add_argument("--column", "-c", required=True, metavar="C", help="the item column")
    h.add_argument("--epsilon", "-e", type=float, required=True, metavar="EPS",
                   help="privacy parameter of each report, in (0, 20]")
    h.add_argument("--top-k", "-k", type=int, default=20, metavar="K", help="heavy hitters to find (default 20)")
    h.add_argument("--method", choices=sorted(heavy_classes()), default="pem",
                   help="pem (default; Prefix Extending Method) or treehist (one bit per level)")
    h.add_argument("--item-bits", type=int, default=64, metavar="B",
                   help="width of an item in bits, 1..256 (default 64: str/bytes items are cut to their first "
                        "B/8 bytes, with a warning that counts them; 256 keeps 32 bytes, with more levels)")
    h.add_argument("--item-type", choices=("str", "bytes", "uint"), default="str",
                   help="str (default: the column as UTF-8 text), bytes (binary), uint (non-negative integer ids)")
    h.add_argument("--rng", type=_seed, default=None, metavar="N",
                   help="seed for a reproducible SIMULATION (anyone with the seed can undo the noise); default: "
                        "secure randomness")
    h.add_argument("--level", type=_level, default=0.95, help="confidence level of the CIs (default 0.95)")
    h.add_argument("--json", action="store_true", help="print the result as JSON (exact floats)")
    h.add_argument("--batch-size", type=_positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"rows per step (default {DEFAULT_BATCH_SIZE}); the result does not depend on it")
    h.add_argument("--delimiter", default=None, metavar="CHAR",
                   help="field delimiter of a CSV input (default ',', tab for .tsv)")
    h.add_argument("--progress", action="store_true", help="show a progress bar (needs tqdm)")

    k = sub.add_parser("keys", help="client keys for longitudinal (repeated) collections",
                       description="Client keys: a 128-bit secret per person, from which the permanent (memoized) "
                                   "answers of longitudinal mechanisms are derived.")
    ksub = k.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    g = ksub.add_parser(
        "generate", help="write fresh keys to a file",
        description="Write N fresh client keys to OUT, readable by its owner only (mode 0600; an existing file is "
                    "never overwritten), and print the count and the key set's fingerprint (a digest that "
                    "identifies the set without revealing a key). OUT is Parquet (.parquet/.pq: uint64 columns "
                    "key0, key1 and, with --people, the person ids) or NumPy (.npy: the keys only). With --people "
                    "FILE --people-column C, one key per distinct id of column C of FILE (a data file, or a list of "
                    "ids; ids written as plain integers are stored as ints, others as text), in order of first "
                    "appearance, written beside the ids: `privatize --keys OUT "
                    "--people-column C` then matches every row to its person's key, whatever the order of the rows "
                    "or the number of rows per person. Without ids the keys are matched to a file's rows in order. "
                    "Keys are secrets: whoever holds a person's key and the reports' spec can undo that person's "
                    "memoized answers.",
        epilog="Examples: `ldpnum keys generate --people users.csv --people-column user_id keys.parquet`; "
               "`ldpnum keys generate 100000 keys.npy`.")
    g.add_argument("count", nargs="?", type=_people, default=None, metavar="N",
                   help="number of keys (optional with --people: then the number of distinct ids, checked if given)")
    g.add_argument("output", metavar="OUT", help="key file to write: .parquet/.pq, or .npy (no ids)")
    g.add_argument("--people", default=None, metavar="FILE",
                   help="a CSV/Parquet file whose --people-column names the people (rows are later matched to keys by "
                        "the ids' text: 7 and \"7\" are one person, \"007\" another)")
    g.add_argument("--people-column", default=None, metavar="C", help="the column of person ids in --people FILE")
    g.add_argument("--delimiter", default=None, metavar="CHAR", help="field delimiter of a CSV --people file")
    g.add_argument("--rng", type=_seed, default=None, metavar="SEED",
                   help="seed for reproducible keys in a SIMULATION (anyone with the seed holds every key); default: "
                        "the operating system's secure source, for real deployments")

    d = sub.add_parser(
        "demo", help="run a demo on the embedded real data and compare the estimates with the truth",
        description="Without an argument (what `make demo` runs): privatize the embedded NYC flights data (2013) "
                    "through the pandas accessor, reconstruct two distributions and every mean oracle's mean, and "
                    "compare them with the truth. With `heavy-hitters`: sample people from the embedded list of "
                    "the 50,000 most frequent English words (wordfreq), one word each, find the most frequent "
                    "words with PEM, and print estimated vs true rank and share with the time taken. With "
                    "`vectors`: estimate the mean of the 1,797 normalized handwritten-digit images (64 pixels, UCI) "
                    "with PrivUnitG (one compressed report per person) and compare it with the true mean. With "
                    "`telemetry`: simulated devices report their most used app every day for 30 days through "
                    "LGRR with memoized responses; per day, the estimated vs true share and each device's epsilon "
                    "spent under memoization vs naive daily collection.",
        epilog="Examples: `ldpnum demo`; `ldpnum demo heavy-hitters`; "
               "`ldpnum demo heavy-hitters --epsilon 2 --n 1e7 --top-k 50 --rng 0`; `ldpnum demo vectors --epsilon 4`; `ldpnum demo telemetry --n 1e5`.")
    d.add_argument("which", nargs="?", choices=DEMOS, default=None, metavar="{heavy-hitters,vectors,telemetry}",
                   help="the heavy-hitter demo on English words, the vector-mean demo on handwritten digits, or the "
                        "daily telemetry demo with memoized responses (default: the flights demo)")
    d.add_argument("--rng", type=_seed, default=None, help="seed for a reproducible simulation (default: secure)")
    d.add_argument("--plot", default=None,
                   help=f"flights demo: where to write the PNG of estimated vs true distributions (default "
                        f"{DEMO_PLOT_PATH}; '' for none)")
    d.add_argument("--epsilon", "-e", type=float, default=None, metavar="EPS",
                   help="heavy-hitters, vectors: privacy parameter of each person's report, in (0, 20] (default 4)")
    d.add_argument("--n", type=_people, default=None, metavar="N",
                   help="heavy-hitters: number of people sampled, e.g. 1e6 (default 1,000,000); telemetry: number of "
                        "devices (default 100,000)")
    d.add_argument("--top-k", "-k", type=_positive_int, default=None, metavar="K",
                   help="heavy-hitters: how many of the most frequent words to find (default 20)")
    c = sub.add_parser("compile", help="compile every client kernel into Numba's cache, so no first call waits",
                       description="Compile the signature of every client kernel the registered mechanisms launch "
                                   "(ldpnum/_kernels/signatures.txt) into Numba's on-disk cache, in worker "
                                   "processes; later processes load the compiled code instead of compiling it. "
                                   "Run once after installing or upgrading ldpnum or Numba (`make install` does).")
    c.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: the CPU count)")
    return parser


# -- commands ----------------------------------------------------------------------------------------------

def _cmd_privatize(args):
    columns = args.column
    if not columns and not args.columns:
        raise CLIError("nothing to privatize: give --column C (with --mechanism, --epsilon, --bounds, or --spec) or "
                       "--columns C1,C2 with --spec")
    if columns and args.spec and not args.mechanism and not args.columns:
        return _privatize(args, spec_column_mechanisms(args))
    if columns and args.spec and args.mechanism and not args.columns:
        raise CLIError("--spec gives the mechanism of each --columns, or of every --column when no --mechanism is "
                       "given: to mix mechanisms with and without bounds, give every --column's mechanism as a --spec "
                       "(any mechanism has one, e.g. json.dumps(ldp.Duchi(1.0, (0, 100)).spec.to_dict()))")
    if args.categories or (columns and not args.spec and not args.columns
                           and any(oracle_class(n) is not None for n in args.mechanism or [])):
        return _privatize(args, category_column_mechanisms(args))  # (categories given, or read from the file)
    for name in (args.mechanism or []) if columns else []:
        mechanism_class(name)  # a mechanism that takes no bounds is named as such, not asked for --bounds
    missing = [flag for flag, v in (("--mechanism", args.mechanism), ("--epsilon", args.epsilon),
                                    ("--bounds", args.bounds)) if columns and not v]
    if missing:
        raise CLIError(f"--column needs {', '.join(missing)}")
    stray = [flag for flag, v in (("--mechanism", args.mechanism), ("--epsilon", args.epsilon),
                                  ("--bounds", args.bounds)) if v and not columns]
    if stray:
        raise CLIError(f"{', '.join(stray)} describe(s) the mechanism of --column; a --columns report column's "
                       "mechanism is its --spec")
    names = per_column(args.mechanism, len(columns), "--mechanism") if columns else []
    epsilons = per_column(args.epsilon, len(columns), "--epsilon") if columns else []
    if len(args.bounds) == 1 and len(columns) > 1:
        raise CLIError(f"--bounds was given once for {len(columns)} columns: bounds are each column's public range, "
                       "so give --bounds LO HI once per --column, in the same order (repeat the pair if the "
                       "columns share it)")
    bounds = per_column([tuple(b) for b in args.bounds], len(columns), "--bounds") if columns else []
    params = parse_params(args.param)
    mechanisms = {}
    for c, name, eps, bnd in zip(columns, names, epsilons, bounds):
        if c in mechanisms:
            raise CLIError(f"column {c!r} is named twice")
        try:
            mechanisms[c] = make_mechanism(name, eps, bnd, params)
        except (ValueError, TypeError) as exc:
            prefix = f"column {c!r}: " if len(columns) > 1 else ""
            raise CLIError(f"{prefix}{one_line(exc)}") from None
    mechanisms.update(multi_column_mechanisms(args))
    return _privatize(args, mechanisms)


def _privatize(args, mechanisms):
    """``ldpnum privatize`` once its report columns' mechanisms are known."""
    check_file_keys(mechanisms, keys=args.keys is not None, shuffled=args.shuffled, ledger=args.ledger is not None,
                    split=args.strategy == "one-column-per-row", round=args.round)
    memoized = [c for c, m in mechanisms.items() if m.memoized]
    key = read_key(args.mac_key_file)
    shuffle_delta = check_file_shuffle(args.shuffled, args.shuffle_delta, args.keep)  # before the ledger is read
    ledger, people = _open_ledger(args, mechanisms)
    delimiter = None if args.delimiter is None else args.delimiter.replace("\\t", "\t")
    row_keys = None if args.keys is None else keys_for_rows(args.keys, args.input, args.people_column, delimiter)
    info = privatize_file(args.input, args.output, mechanisms, rng=args.rng, strategy=args.strategy,
                          nan_fill=args.nan_fill,
                          out_of_range=args.out_of_range, keep=args.keep, batch_size=args.batch_size,
                          delimiter=delimiter, progress=args.progress, key=key, shuffle_delta=shuffle_delta,
                          keys=row_keys, round=args.round,
                          before_drawing=None if ledger is None else ledger_check(ledger, people, args.ledger))
    if args.write_spec:
        try:
            write_spec_file(args.write_spec, info["specs"], shuffle_delta)
        except OSError as exc:
            raise CLIError(f"cannot write --write-spec file {args.write_spec!r}: {exc.strerror}") from None
    if ledger is not None:  # memoized columns: each person charged per memoized value (their rounds)
        record_file_ledger(ledger, args.ledger, info, people=people, label=args.label, shuffled=args.shuffled,
                           shuffle_delta=shuffle_delta)
    for c, spec in info["specs"].items():
        print(f"{c}: {spec}")
        if c in memoized:
            print(f"{c}: {_longitudinal_line(mechanisms[c], spec.get('round'))}")
    kept = f"; kept unchanged: {', '.join(info['kept'])}" if info["kept"] else ""
    mode = f"a seeded simulation, rng={args.rng}" if args.rng is not None else "secure randomness"
    how = "one column per row" if info["strategy"] == "one-column-per-row" else "every column on every row"
    shuffled = "" if shuffle_delta is None else f"; declared shuffled (central delta {shuffle_delta:g})"
    print(f"wrote {info['rows']:,} rows of reports to {args.output} ({mode}; {how}); epsilon per row: "
          f"{info['epsilon_per_row']:g}{shuffled}{kept}")
    return 0


def _cmd_estimate(args):
    require_pyarrow()
    whats = list(dict.fromkeys(args.what)) if args.what else None
    if args.range is not None:
        args.range = _parse_range(args.range)
        if whats is None:
            whats = ["range"]
    if whats and "range" in whats and args.range is None:
        raise CLIError("--what range needs --range LO HI")
    explicit = explicit_spec(args)
    key = read_key(args.mac_key_file)
    _, mech = report_column(str(args.reports), args.column, explicit)  # the file's metadata only
    candidates = _parse_candidates(args.candidates, mech)
    estimate_method = args.method if args.method in ESTIMATE_METHODS else "unbiased"
    dist_method = "ems-cv" if args.method is None or args.method in ESTIMATE_METHODS else args.method
    whats = check_estimate_request(mech, whats, marginal=args.marginal, query=args.range, plot=args.plot,
                                   n_bins=args.n_bins, bootstrap=args.bootstrap, level=args.level,
                                   rng=args.rng, estimate_method=estimate_method,
                                   postprocess=args.postprocess, candidates=candidates)  # before a report is read
    agg, n_missing = aggregate_file(args.reports, args.column, spec=explicit, batch_size=args.batch_size,
                                    progress=args.progress, key=key)
    if explicit is None and key is None:
        print(f"ldpnum: note: the spec of {args.column!r} was read from the file and not checked against the "
              "one you deployed; state it with --expect-spec FILE (written by privatize --write-spec)",
              file=sys.stderr)
    if key is None or getattr(args, "expect_spec", None) is not None:
        _check_shuffle_declaration(args, agg)  # (a record signed with --mac-key-file cannot have been edited)
    try:
        out, dist = answer_queries(mech, agg, whats, n_bins=args.n_bins, method=dist_method, level=args.level,
                                   quantiles=args.quantiles, query=args.range, marginals=args.marginal,
                                   postprocess=args.postprocess, distribution=bool(args.plot),
                                   bootstrap=args.bootstrap, rng=args.rng, estimate_method=estimate_method,
                                   candidates=candidates)
    except MarginalQueryError as exc:
        raise CLIError(f"--marginal {args.marginal!r}: {one_line(exc)}") from None
    spec = agg.spec
    if args.plot:
        from ._results import named

        title = f"{args.column}: {spec.mechanism}, epsilon = {spec.epsilon:g}, n = {agg.n_reports:,}"
        write_plot(named(dist, args.column), args.plot, title)
    if args.json:
        doc = {"column": args.column, "spec": spec.to_dict(), "n_reports": agg.n_reports, "n_missing": n_missing,
               **out}
        if mech.memoized:
            doc["longitudinal"] = {"round": spec.get("round"), "epsilon_report": mech.epsilon_report,
                                   "epsilon_permanent": mech.epsilon_permanent}
        if agg.shuffle is not None:
            doc["shuffle"] = {"epsilon": agg.shuffle.epsilon, "delta": agg.shuffle.delta, "n": agg.shuffle.n}
        if args.plot:
            doc["plot"] = args.plot
        print(json.dumps(doc))
    else:
        missing = f" ({n_missing:,} missing cells skipped)" if n_missing else ""
        head = f"{args.column}: {agg.n_reports:,} reports{missing}; {spec}"
        if mech.memoized:
            head += f"\n{_longitudinal_line(mech, spec.get('round'))}"
        if agg.shuffle is not None:
            head += f"\n{agg.shuffle.describe()}"
        _print_estimates(out, head, sys.stdout)
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0


def _cmd_keys(args):
    """``ldpnum keys generate [N] OUT [--people FILE --people-column C] [--rng SEED]``."""
    if (args.people is None) != (args.people_column is None):
        raise CLIError("--people FILE and --people-column C go together: the keys are written with the person ids of "
                       "column C of FILE (one key per distinct id)")
    keys, ids = generate_keys_file(args.output, args.count, people=args.people, people_column=args.people_column,
                                   delimiter=args.delimiter, rng=args.rng)
    n = len(keys)
    named = f", one per person of column {args.people_column!r}" if ids is not None else " (row for row)"
    mode = (f"seeded with --rng {args.rng}: a SIMULATION, anyone with the seed holds every key" if args.rng is not None
            else "from the operating system's secure source")
    print(f"wrote {n:,} client keys{named} to {args.output} ({mode}; file readable by its owner only)")
    print(f"fingerprint: {keys.fingerprint}")
    return 0


def _cmd_compile(args):
    from ._kernels import _cache

    t0 = time.perf_counter()
    rows = _cache.compile_all(jobs=args.jobs)
    kernels, loaded = len({r["kernel"] for r in rows}), sum(r["loaded"] for r in rows)
    print(f"ldpnum compile: {len(rows)} signature{'s' * (len(rows) != 1)} of {kernels} kernel{'s' * (kernels != 1)} "
          f"in {time.perf_counter() - t0:.1f} s ({loaded} already in Numba's cache)")
    return 0


def _cmd_demo(args):
    from .demo import PLOT_PATH, demo, demo_distribution, demo_heavy_hitters

    heavy = {k: v for k, v in (("epsilon", args.epsilon), ("n", args.n), ("top_k", args.top_k)) if v is not None}
    if args.which == "vectors":
        if args.plot is not None or args.n is not None or args.top_k is not None:
            raise CLIError("`ldpnum demo vectors` takes --epsilon and --rng only")
        from .demo import demo_vectors

        demo_vectors(rng=args.rng, **({} if args.epsilon is None else {"epsilon": args.epsilon}))
        return 0
    if args.which == "telemetry":
        if args.plot is not None or args.epsilon is not None or args.top_k is not None:
            raise CLIError("`ldpnum demo telemetry` takes --n and --rng only")
        from .demo import demo_telemetry

        demo_telemetry(rng=args.rng, **({} if args.n is None else {"n": args.n}))
        return 0
    if args.which == "heavy-hitters":
        if args.plot is not None:
            raise CLIError("--plot applies to the flights demo (`ldpnum demo`), not to `ldpnum demo heavy-hitters`")
        demo_heavy_hitters(rng=args.rng, **heavy)
        return 0
    if heavy:
        raise CLIError("--epsilon, --n and --top-k apply to `ldpnum demo heavy-hitters`, not to the flights demo")
    demo_distribution(rng=args.rng, plot_path=PLOT_PATH if args.plot is None else args.plot)
    print()
    return demo(rng=args.rng)


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    Examples
    --------
    >>> main(["estimate", "no-such-file.parquet", "--column", "x"])
    2
    """
    args = _parser().parse_args(_negative_numbers(argv))
    command = {"privatize": _cmd_privatize, "estimate": _cmd_estimate, "heavy-hitters": _cmd_heavy_hitters,
               "keys": _cmd_keys, "demo": _cmd_demo, "compile": _cmd_compile}[args.command]
    try:
        with terminate_as_interrupt():  # a stopped `privatize` removes its hidden file
            return command(args)
    except KeyboardInterrupt:
        print("ldpnum: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output went away (`ldpnum estimate ... | head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
            pass
        return 141
    except Exception as exc:
        if not is_user_error(exc) or os.environ.get("LDPNUM_DEBUG"):
            raise
        print(f"ldpnum: error: {one_line(exc)}", file=sys.stderr)
        return 2


def _negative_numbers(argv):
    """Keep negative numbers written in exponent form (``-1e308``, ``-2E3``) as values.

    argparse takes an argument that starts with ``-`` for an option unless it looks like a plain negative number.
    """
    import re

    argv = list(sys.argv[1:] if argv is None else argv)
    number = re.compile(r"^-(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
    return [f" {a}" if number.match(a) else a for a in argv]


def main_exit() -> None:
    """Entry point of the ``ldpnum`` console script: :func:`main`'s return value is the exit status."""
    sys.exit(main())
