"""Tools for a greenhouse gantry robot that rides on rails over twelve plant beds."""

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill, tool

_state = {
    "bed": 1,
    "rail_cm": 0.0,
    "tank_litres": 40.0,
    "lights_on": False,
    "brightness": 100,
    "vents_percent": 20,
    "temperature_c": 24.5,
    "humidity_percent": 68,
    "moisture": {b: 30 + (b * 7) % 40 for b in range(1, 13)},
    "photos": 0,
    "docked": True,
}

Mix = Literal["fungicide", "insecticide", "foliar_feed", "water_mist"]


@tool
def move_to_bed(bed: int) -> str:
    """Drive the gantry along the rails until it is over a plant bed.

    Args:
        bed: Bed number, 1 to 12.
    """
    if not 1 <= bed <= 12:
        return f"There is no bed {bed}; beds are numbered 1 to 12."
    _state["bed"] = bed
    _state["rail_cm"] = (bed - 1) * 150.0
    _state["docked"] = False
    return f"Now over bed {bed}."


@tool
def jog(distance_cm: Annotated[float, "centimetres; positive is forward, negative is backward"]) -> str:
    """Nudge the gantry a short distance along the rail.

    Positive distances move it forward (towards the door end), negative distances
    move it backward (towards the back wall). At most 100 cm either way.
    """
    if abs(distance_cm) > 100:
        return "Jogs are limited to 100 cm; use move_to_bed for longer moves."
    _state["rail_cm"] = max(0.0, _state["rail_cm"] + distance_cm)
    _state["docked"] = False
    return f"Moved {distance_cm:+.0f} cm, now at {_state['rail_cm']:.0f} cm on the rail."


@skill(timeout_s=120)
def water_bed(bed: int, goal: GoalHandle, litres: float = 2.0) -> str:
    """Water one plant bed with the drip boom. Takes a while for big amounts.

    Args:
        bed: Bed number, 1 to 12.
        litres: How much water to give, in litres, at most 10. Defaults to 2 litres.
    """
    if not 1 <= bed <= 12:
        return f"There is no bed {bed}."
    if litres <= 0 or litres > 10:
        return "I can give between 0 and 10 litres per watering."
    _state["bed"] = bed
    steps = 10
    for i in range(steps):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / steps})
    _state["tank_litres"] -= litres
    _state["moisture"][bed] = min(100, _state["moisture"][bed] + int(litres * 6))
    return f"Gave bed {bed} {litres:g} litres of water."


@tool
def spray(mix: Mix, bed: int) -> str:
    """Spray a bed with one of the sprayer's mixes.

    Args:
        mix: Which tank to spray from: fungicide, insecticide, foliar_feed (liquid
            fertiliser on the leaves) or water_mist.
        bed: Bed number, 1 to 12.
    """
    if not 1 <= bed <= 12:
        return f"There is no bed {bed}."
    _state["bed"] = bed
    return f"Sprayed bed {bed} with {mix.replace('_', ' ')}."


@tool
def read_soil_moisture(bed: int) -> str:
    """Lower the probe and read the soil moisture of a bed, in percent.

    Args:
        bed: Bed number, 1 to 12.
    """
    if not 1 <= bed <= 12:
        return f"There is no bed {bed}."
    return f"Bed {bed} soil moisture is {_state['moisture'][bed]} percent."


@tool
def take_photo(bed: int, mode: Literal["visible", "infrared"] = "visible") -> str:
    """Take a photo of a bed with the overhead camera.

    Args:
        bed: Bed number, 1 to 12.
        mode: visible (normal colour photo, the default) or infrared (for plant stress).
    """
    _state["photos"] += 1
    return f"Saved {mode} photo #{_state['photos']} of bed {bed}."


@tool
def set_grow_lights(on: bool, brightness: int = 100) -> str:
    """Switch the grow lights on or off.

    Args:
        on: True to switch them on, False to switch them off.
        brightness: Brightness in percent, 0 to 100 (only used when on).
    """
    _state["lights_on"] = on
    if on:
        _state["brightness"] = brightness
        return f"Grow lights on at {brightness}%."
    return "Grow lights off."


@tool
def set_vents(opening_percent: int) -> str:
    """Open or close the roof vents. 0 is fully closed and 100 is fully open."""
    _state["vents_percent"] = opening_percent
    return f"Roof vents at {opening_percent}% open."


@tool
def get_status() -> str:
    """Report the gantry's position, water tank level, greenhouse temperature and humidity,
    and whether the lights and vents are on/open."""
    where = "docked" if _state["docked"] else f"over bed {_state['bed']}"
    lights = f"on at {_state['brightness']}%" if _state["lights_on"] else "off"
    return (
        f"Gantry {where}, tank {_state['tank_litres']:.0f} litres, "
        f"{_state['temperature_c']} degrees C, humidity {_state['humidity_percent']}%, "
        f"lights {lights}, vents {_state['vents_percent']}% open."
    )


@tool
def park() -> str:
    """Abort whatever the gantry is doing, retract the probe and sprayer and drive back to
    the docking station at the end of the rails."""
    _state["docked"] = True
    _state["rail_cm"] = 0.0
    return "Parked at the dock."
