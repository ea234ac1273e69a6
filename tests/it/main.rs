//! The integration tests, one binary (linking the crate and its dependencies once, not once per
//! suite): each module is one suite, run as `cargo test --test it SUITE::` (e.g.
//! `cargo test --test it mcp_ui::`). They drive real parts: the MCP protocol over stdio or HTTP
//! (rmcp's client), the adb program and its server, adb_client, Debian's toybox, the captures in
//! `../shared/device-captures`; `common` holds the shared helpers.

mod common;

mod attack_auth6;
mod attack_files;
mod attack_files5;
mod attack_identity;
mod attack_input;
mod attack_lab;
mod attack_rec;
mod attack_sim_web;
mod attack_suite;
mod attack_team2;
mod attack_templates;
mod bad_inputs;
mod budget;
mod captures;
mod code_mode;
mod code_mode_workspaces;
mod context_contract;
mod device_layer;
mod docs;
mod e2e_device;
mod emulator_console;
mod fault_matrix;
mod files;
mod flow;
mod flow_check;
mod flow_commands;
mod flow_coverage;
mod flow_http;
mod flow_js;
mod flow_secrets;
mod flow_selectors;
mod flow_templates;
mod flow_verify;
mod house;
mod http;
mod http_abuse;
mod install_anywhere;
mod isolation;
mod leases;
mod many_sources;
mod mcp_app;
mod mcp_core;
mod mcp_logcat_shell;
mod mcp_refs;
mod mcp_ui;
mod mcp_ui_capture;
mod mcp_ui_waits;
mod memory;
mod oauth;
mod packaging;
mod panel;
mod phone_costs;
mod phone_input;
mod phone_states;
mod principals;
mod sim_adb;
mod sim_adb_client;
mod sim_hostile;
mod sim_toybox;
mod suite;
mod take_over;
mod team;
mod two_devices;
mod web;
