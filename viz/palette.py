"""Colours of the tree figure, a projector style, and the check that its palette survives
colour-blindness (pure: no streamlit, no plotly).

``TreeStyle`` holds what ``viz.tree.tree_figure`` draws with: font sizes, node sizes, line widths
and the colours of the marks. ``DEFAULT_STYLE`` is the app's usual look (matplotlib's tab10
orange / green / red); ``PRESENTER_STYLE`` is for a projector at 1280x720: larger text and
nodes, thicker highlighted chains, and colours from the Okabe-Ito palette (Okabe & Ito 2008,
"Color Universal Design", https://jfly.uni-koeln.de/color/), chosen to stay apart for people
with any of the three kinds of dichromacy, with the Cividis colour scale for values (Nunez,
Anderton & Renslow 2018, "Optimizing colormaps with consideration for color vision
deficiency").

The check: ``simulate_cvd`` turns an sRGB colour into what a protanope, deuteranope or tritanope
sees, with the matrices of Machado, Oliveira & Fernandes 2009 ("A Physiologically-based Model
for Simulation of Color Vision Deficiency", IEEE TVCG 15(6), severity 1.0, applied to linear
RGB as colorspacious does; the tests check ours equal its); ``delta_e2000`` is the CIEDE2000
colour difference (Sharma, Wu & Dalal 2005, "The CIEDE2000 Color-Difference Formula:
Implementation Notes, Supplementary Test Data, and Mathematical Observations"; checked in tests
against their test pairs). ``min_distance``
is the smallest difference between any two of a palette's colours, with normal vision or under
a simulation: ``tests/pages/test_presenter.py`` holds the presenter palette above ``MIN_DELTA_E``
under all three, and ``python -m viz.palette`` prints the figures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Optional

# Machado et al. 2009, severity 1.0 (the supplementary table of the paper's web page): linear
# RGB -> linear RGB as seen with the cone type missing.
MACHADO_2009 = {
    "protanopia": ((0.152286, 1.052583, -0.204868),
                   (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968),
                     (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779),
                   (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}
CVD_KINDS = tuple(MACHADO_2009)
MIN_DELTA_E = 20.0  # CIEDE2000: about 2.3 is a just noticeable difference; 20 reads at a glance


@dataclass(frozen=True)
class TreeStyle:
    """How the tree figure looks. Sizes in px: ``label_px`` text beside nodes, ``legend_px``
    legend and colour-bar text, ``row_px`` the least row spacing that keeps text (also caps a
    node's size), ``node_min`` / ``node_per_sqrt`` a node's size = node_min + node_per_sqrt *
    sqrt(visits or count), ``path_width`` / ``edge_width`` line widths. Colours: hex sRGB.
    ``colorscale``: a plotly colour scale name for node values. ``correct_name``: the
    correct colour's name in figure notes ("green" or "blue": ``viz.votes`` picks its
    translated note by it)."""
    label_px: int = 14
    legend_px: int = 12
    row_px: int = 26
    node_min: float = 8.0
    node_per_sqrt: float = 2.5
    path_width: float = 5.0
    edge_width: float = 1.5
    path: str = "#ff7f0e"
    correct: str = "#2ca02c"
    wrong: str = "#d62728"
    unknown: str = "#555555"
    none: str = "#b0b0b0"
    text: str = "#262730"
    edge: str = "#c8c8c8"
    colorscale: str = "Viridis"
    correct_name: str = "green"

    @property
    def char_px(self) -> float:
        """Mean width (px) of one character of the label font (digits, + - * =)."""
        return 0.52 * self.label_px

    def marks(self) -> dict[str, str]:
        """The colours a reader must tell apart: name -> hex (highlighted chain, correct and
        wrong answers, answer with unknown gold, node without a value)."""
        return {"highlighted chain": self.path, "correct answer": self.correct,
                "wrong answer": self.wrong, "answer (gold unknown)": self.unknown,
                "no value": self.none}


DEFAULT_STYLE = TreeStyle()
# Okabe-Ito blue #0072B2 (correct) and vermillion #D55E00 (wrong), the pair that stays apart in
# every dichromacy; the highlighted chain black and thick; greys for an unknown gold and for nodes
# without a value. Chosen by the smallest CIEDE2000 over normal vision and the three simulations
# (20.7, blue / grey; Okabe-Ito orange or reddish purple for the chain fell to 12.5 and 11.7
# under deuteranopia).
# Text and edges darker than usual for a washed-out projector.
PRESENTER_STYLE = TreeStyle(label_px=20, legend_px=16, row_px=36, node_min=12.0,
                            node_per_sqrt=3.5, path_width=7.0, edge_width=2.5,
                            path="#000000", correct="#0072B2", wrong="#D55E00",
                            unknown="#777777", none="#CCCCCC", text="#000000",
                            edge="#a0a0a0", colorscale="Cividis", correct_name="blue")


def hex_to_rgb(color: str) -> tuple[float, float, float]:
    """``"#rrggbb"`` -> sRGB in [0, 1]^3. Raises ValueError for anything else."""
    s = color.strip().lstrip("#")
    if len(s) != 6:
        raise ValueError(f"not a #rrggbb colour: {color!r}")
    return tuple(int(s[i:i + 2], 16) / 255.0 for i in (0, 2, 4))  # type: ignore[return-value]


def _linear(c: float) -> float:  # sRGB companding (IEC 61966-2-1)
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _gamma(c: float) -> float:
    c = min(1.0, max(0.0, c))
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def simulate_cvd(rgb: tuple[float, float, float], kind: str) -> tuple[float, float, float]:
    """sRGB in [0, 1]^3 as seen with ``kind`` (one of ``CVD_KINDS``; Machado et al. 2009,
    severity 1.0, on linear RGB; the result clipped to the gamut). ValueError for another
    kind."""
    if kind not in MACHADO_2009:
        raise ValueError(f"kind must be one of {', '.join(CVD_KINDS)}, got {kind!r}")
    lin = [_linear(c) for c in rgb]
    m = MACHADO_2009[kind]
    return tuple(_gamma(sum(m[r][k] * lin[k] for k in range(3)))  # type: ignore[return-value]
                 for r in range(3))


def rgb_to_lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """sRGB in [0, 1]^3 -> CIELAB (D65 white, 2 degree observer; L in [0, 100])."""
    r, g, b = (_linear(c) for c in rgb)
    x = 0.4124564 * r + 0.3575761 * g + 0.1804375 * b
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = 0.0193339 * r + 0.1191920 * g + 0.9503041 * b
    white = (0.95047, 1.0, 1.08883)

    def f(t: float) -> float:
        d = 6 / 29
        return t ** (1 / 3) if t > d ** 3 else t / (3 * d * d) + 4 / 29

    fx, fy, fz = (f(v / w) for v, w in zip((x, y, z), white))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """CIEDE2000 colour difference of two CIELAB colours (kL = kC = kH = 1), as written out by
    Sharma, Wu & Dalal 2005 (equations 1-22)."""
    L1, a1, b1 = lab1
    L2, a2, b2 = lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar ** 7 / (c_bar ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = L2 - L1, c2p - c1p
    if c1p * c2p == 0:
        dh = 0.0
    elif abs(h2p - h1p) <= 180:
        dh = h2p - h1p
    elif h2p - h1p > 180:
        dh = h2p - h1p - 360
    else:
        dh = h2p - h1p + 360
    dH = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh) / 2)
    l_bar, cp_bar = (L1 + L2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    elif h1p + h2p < 360:
        h_bar = (h1p + h2p + 360) / 2
    else:
        h_bar = (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_bar - 30)) + 0.24 * math.cos(math.radians(2 * h_bar))
         + 0.32 * math.cos(math.radians(3 * h_bar + 6))
         - 0.20 * math.cos(math.radians(4 * h_bar - 63)))
    d_theta = 30 * math.exp(-(((h_bar - 275) / 25) ** 2))
    rc = 2 * math.sqrt(cp_bar ** 7 / (cp_bar ** 7 + 25 ** 7))
    sl = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    sc = 1 + 0.045 * cp_bar
    sh = 1 + 0.015 * cp_bar * t
    rt = -math.sin(math.radians(2 * d_theta)) * rc
    return math.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dH / sh) ** 2
                     + rt * (dc / sc) * (dH / sh))


def distances(colors: Mapping[str, str],
              kind: Optional[str] = None) -> dict[tuple[str, str], float]:
    """CIEDE2000 between every pair of ``colors`` (name -> hex), as seen with normal vision
    (``kind`` None) or with ``kind`` (one of ``CVD_KINDS``)."""
    def lab(h: str):
        rgb = hex_to_rgb(h)
        return rgb_to_lab(rgb if kind is None else simulate_cvd(rgb, kind))
    labs = {n: lab(h) for n, h in colors.items()}
    return {(a, b): delta_e2000(labs[a], labs[b]) for a, b in combinations(colors, 2)}


def min_distance(colors: Mapping[str, str], kind: Optional[str] = None) -> tuple[float, tuple]:
    """(the smallest CIEDE2000 between two of ``colors``, that pair) under ``kind``."""
    d = distances(colors, kind)
    pair = min(d, key=d.get)
    return d[pair], pair


def contrast_ratio(fg: str, bg: str = "#ffffff") -> float:
    """WCAG 2 contrast ratio of two hex colours: (L1 + 0.05) / (L2 + 0.05), L the relative
    luminance, lighter first (1 to 21; 3 is the minimum for large text)."""
    def lum(h: str) -> float:
        r, g, b = (_linear(c) for c in hex_to_rgb(h))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


if __name__ == "__main__":  # the check's figures: python -m viz.palette
    for name, style in (("default", DEFAULT_STYLE), ("presenter", PRESENTER_STYLE)):
        for kind in (None, *CVD_KINDS):
            d, pair = min_distance(style.marks(), kind)
            print(f"{name:9s} {kind or 'normal vision':13s} min CIEDE2000 {d:6.1f} "
                  f"({pair[0]} / {pair[1]})")
