import { describe, expect, it } from "vitest";
import { describeContext } from "../src/contextView";

describe("describeContext", () => {
  it("names each defining file with its definitions, in prompt order", () => {
    const text = describeContext({
      path: "tasks.py",
      definitions: [
        { path: "models.py", name: "Task" },
        { path: "models.py", name: "new_task" },
        { path: "utils.py", name: "pluralize" },
      ],
      chars: 312,
      resolved: 4,
      enabled: true,
    });
    expect(text).toBe("Last completion in tasks.py was sent: Task, new_task from models.py; pluralize from utils.py (312 characters).");
  });

  it("says when nothing was sent and when the setting is off", () => {
    expect(describeContext({ path: null, definitions: [], chars: 0, resolved: 0, enabled: true })).toMatch(/No definitions/);
    expect(describeContext({ path: "a.py", definitions: [], chars: 0, resolved: 2, enabled: false })).toMatch(/off/);
  });
});
