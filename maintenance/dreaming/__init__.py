"""Bounded Dreaming: consolidate duplicates and collisions in small, frozen windows, by proposal only.

``windows`` chooses and freezes the members, ``planner`` (pure) plans on a
window, ``checks`` refuses a plan that oversteps, ``runs`` records the run and
proposes its actions as the tenant's system agent; ``api`` lists the runs.
"""
