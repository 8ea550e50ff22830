// The panels, in page order. A new panel is a module with a Panel subclass, listed here.

import { AlertsPanel } from "./alerts.js";
import { BreakdownPanel } from "./breakdown.js";
import { ComparePanel } from "./compare.js";
import { EventsPanel } from "./events.js";
import { InterleavingPanel } from "./interleaving.js";
import { OverviewPanel } from "./overview.js";
import { TimeseriesPanel } from "./timeseries.js";
import { WorstQueriesPanel } from "./worst.js";
import { ZeroResultsPanel } from "./zeroresults.js";

export function createPanels() {
  return [
    new OverviewPanel(),
    new AlertsPanel(),
    new EventsPanel(),
    new TimeseriesPanel(),
    new BreakdownPanel("topic", "Per topic", "topic", "(no topic)"),
    new BreakdownPanel("searchType", "Per search type", "search type", "(none)"),
    new ComparePanel(),
    new InterleavingPanel(),
    new ZeroResultsPanel(),
    new WorstQueriesPanel(),
  ];
}
