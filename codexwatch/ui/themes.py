"""Colour-blind-safe themes (Okabe–Ito palette), dark and light.

Colour is never the only cue in codexwatch (glyphs and words carry every class and
verdict); these palettes keep the colours distinguishable for protan/deutan/tritan users."""

from __future__ import annotations

from textual.theme import Theme

OKABE_ITO = {
    "blue": "#0072B2",
    "sky": "#56B4E9",
    "orange": "#E69F00",
    "vermillion": "#D55E00",
    "green": "#009E73",
    "yellow": "#F0E442",
    "purple": "#CC79A7",
}

CB_DARK = Theme(
    name="codexwatch-cb-dark",
    primary=OKABE_ITO["sky"],
    secondary=OKABE_ITO["blue"],
    accent=OKABE_ITO["yellow"],
    warning=OKABE_ITO["orange"],
    error=OKABE_ITO["vermillion"],
    success=OKABE_ITO["green"],
    foreground="#e8e8e8",
    background="#141414",
    surface="#1e1e1e",
    panel="#2a2a2a",
    dark=True,
)

# On a light background the Okabe–Ito purple, green, orange and vermillion are too pale
# for text (contrast 2.9–3.7 : 1 on #fafafa); the same hues darkened reach 5 : 1 or more.
LIGHT_TEXT = {
    "purple": "#9E4A7E",
    "green": "#007A5A",
    "orange": "#8A5E00",
    "vermillion": "#B34C00",
}

CB_LIGHT = Theme(
    name="codexwatch-cb-light",
    primary=OKABE_ITO["blue"],
    secondary=OKABE_ITO["sky"],
    accent=LIGHT_TEXT["purple"],
    warning=LIGHT_TEXT["orange"],
    error=LIGHT_TEXT["vermillion"],
    success=LIGHT_TEXT["green"],
    foreground="#1a1a1a",
    background="#fafafa",
    surface="#f0f0f0",
    panel="#e2e2e2",
    dark=False,
)

THEMES = (CB_DARK, CB_LIGHT)
