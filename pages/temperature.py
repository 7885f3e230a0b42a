"""Placeholder until the real page lands (another helper writes it)."""
import streamlit as st

st.title("temperature")
st.info("This page is being built.")
