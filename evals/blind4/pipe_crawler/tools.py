"""Tools for the pipe inspection crawler.

A tethered tracked crawler that inspects sewer and water mains from the inside. It is
launched from a manhole, drives along the pipe on its tracks and is paid out / reeled
in on a tether winch at the surface. It carries a camera on a tilting head, LED
lights, a laser ring profiler and a sonde (locator beacon) for the surface crew.

The functions are stubs: they describe what the robot would do.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from edgevox.agents import tool


DefectCode = Literal[
    "crack",
    "fracture",
    "roots",
    "deposits",
    "joint_offset",
    "infiltration",
    "collapse",
]


@tool
def crawl(distance_m: float) -> str:
    """Drive the crawler along the pipe by a given distance.

    Args:
        distance_m: How far to drive, in metres, between -50 and 50. Positive drives
            forward (downstream, away from the launch manhole); negative reverses back
            toward the launch manhole. The winch follows when it is in auto mode.
    """
    direction = "forward" if distance_m >= 0 else "in reverse"
    return f"Crawling {direction} {abs(distance_m):g} m."


@tool
def set_crawl_speed(m_per_min: float) -> str:
    """Set the crawler's track speed.

    Args:
        m_per_min: Track speed in metres per minute, between 0.5 and 10.
    """
    return f"Crawl speed set to {m_per_min:g} m/min."


@tool
def tilt_camera(
    angle_deg: Annotated[float, Field(ge=-90, le=90, description=(
        "Tilt angle in degrees, from -90 to 90. 0 looks straight down the pipe; "
        "positive tilts up toward the crown (top of the pipe), negative tilts down "
        "toward the invert (bottom)."
    ))],
) -> str:
    """Tilt the camera head up or down to a given angle."""
    return f"Camera head tilted to {angle_deg:+g} degrees."


@tool
def switch_lights(on: bool) -> str:
    """Turn the crawler's LED lights on or off.

    Args:
        on: True to switch the lights on, False to switch them off.
    """
    return f"Lights {'on' if on else 'off'}."


@tool
def set_light_brightness(percent: int) -> str:
    """Set the brightness of the LED lights.

    Args:
        percent: Brightness in percent, between 10 and 100 (below 10 the camera
            cannot see anything useful; use switch_lights to turn them off).
    """
    return f"Lights at {percent}%."


@tool
def set_winch_mode(mode: Literal["auto", "hold", "manual"]) -> str:
    """Set the tether winch mode.

    Args:
        mode: "auto" pays out and reels in tether to follow the crawler, "hold" locks
            the drum, "manual" free-spools the drum so the crew can feed cable by hand.
    """
    return f"Winch in {mode} mode."


@tool
def set_laser_profiler(enabled: bool) -> str:
    """Switch the laser ring profiler on or off.

    The profiler projects a laser ring on the pipe wall and measures ovality and
    deformation while the crawler moves.

    Args:
        enabled: True to start profiling, False to switch the laser off.
    """
    return f"Laser profiler {'on' if enabled else 'off'}."


@tool
def set_sonde(
    on: Annotated[bool, "True to switch the sonde (locator beacon) on, False to switch it off"],
    frequency: Annotated[
        Literal["512Hz", "8kHz", "33kHz"] | None,
        "Transmit frequency for the locator at the surface; None keeps the current one",
    ] = None,
) -> str:
    """Switch the sonde locator beacon on or off, optionally choosing its frequency."""
    if not on:
        return "Sonde off."
    return f"Sonde on{' at ' + frequency if frequency else ''}."


@tool
def log_defect(defect: DefectCode, clock: int | None = None) -> str:
    """Log a pipe defect at the crawler's current position in the inspection report.

    Args:
        defect: The kind of defect seen.
        clock: Clock position of the defect around the pipe wall, 1 to 12, with 12 at
            the crown and 6 at the invert. Leave out if it goes all the way round.
    """
    where = f" at {clock} o'clock" if clock else ""
    return f"Logged {defect.replace('_', ' ')}{where}."


@tool
def get_status() -> str:
    """Report the crawler's status: distance into the pipe, tether paid out, pitch and
    roll, battery and what is switched on."""
    return (
        "42.3 m into the pipe, 44.0 m of tether out, pitch -1.5 degrees, roll 3 degrees, "
        "battery 78%, lights on, laser off, sonde on at 512Hz."
    )


@tool
def emergency_retract() -> str:
    """Abort the inspection and reel the crawler back to the launch manhole at full
    winch speed.

    Drastic: use when the pipe surcharges, the crawler is stuck or the tether is at
    risk. Tracks go to free-wheel and the winch pulls the crawler out by the tether.
    """
    return "Emergency retract: inspection aborted, reeling the crawler back to the manhole."
