import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { fake } from "./fakeVscode";
import { askModally } from "../src/serverQuestions";

const RUN = { title: "Run" };
const DONT = { title: "Don't run" };

describe("the server's questions", () => {
  beforeEach(() => fake.reset());

  it("are modal: the first paragraph is the title, the command the detail, the actions its buttons", async () => {
    fake.answer = "Run";
    const answer = await askModally({ type: 2, message: "Kestrel's agent asks to run a command in ws:\n\npytest -q", actions: [DONT, RUN] });
    expect(answer).toEqual(RUN);
    // In the server's order: the first is the dialog's default (Enter), which for a command is Don't run.
    expect(fake.warningCalls).toEqual([
      { message: "Kestrel's agent asks to run a command in ws:", options: { modal: true, detail: "pytest -q" }, items: ["Don't run", "Run"] },
    ]);
  });

  it("answer null when the dialog is cancelled, and the action chosen otherwise", async () => {
    fake.answer = undefined; // Cancel, Escape
    expect(await askModally({ type: 2, message: "Run?\n\nrm -rf build", actions: [RUN, DONT] })).toBeNull();
    fake.answer = "Don't run";
    expect(await askModally({ type: 2, message: "Run?\n\nrm -rf build", actions: [RUN, DONT] })).toEqual(DONT);
  });
});
